"""Checking code that several pages of the serving chapter share: ``serving/journey.md``,
``serving/model-runner.md``, ``serving/prefix-caching.md``, ``serving/scheduler.md``.

The chapter's checks: Run nano-vllm's own pure-Python engine parts, read from its git objects at
the pin.
"""

from __future__ import annotations

import math
import random
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from atlas.labkit.pinned import package, pinned
from atlas.labkit.serving.simulator import TraceRequest

ROLE = "check"


UPSTREAM = "nano-vllm"
BLOCK_MANAGER_FILES = (
    "nanovllm/sampling_params.py",
    "nanovllm/engine/sequence.py",
    "nanovllm/engine/block_manager.py",
)
SCHEDULER_FILES = BLOCK_MANAGER_FILES + ("nanovllm/engine/scheduler.py",)


@dataclass
class SchedulerConfig:
    """The fields of nano-vllm's ``Config`` that its ``Scheduler.__init__`` reads."""

    max_num_seqs: int = 512
    max_num_batched_tokens: int = 16384
    eos: int = -1
    kvcache_block_size: int = 256
    num_kvcache_blocks: int = -1


def _label(root: Path | None) -> str:
    """``nano-vllm@<short sha>``: the pin that the labs print."""
    return pinned(UPSTREAM, root).label(7)


def load_scheduler(root: Path | None = None) -> types.SimpleNamespace:
    """nano-vllm's ``Scheduler`` (with its real block manager) at the pin."""
    label = _label(root)
    config = types.ModuleType("nanovllm.config")
    config.Config = SchedulerConfig  # type: ignore[attr-defined]
    mods = package(UPSTREAM, SCHEDULER_FILES, {"nanovllm.config": config}, root=root)
    return types.SimpleNamespace(
        label=label,
        Scheduler=mods["nanovllm.engine.scheduler"].Scheduler,
        Sequence=mods["nanovllm.engine.sequence"].Sequence,
        SamplingParams=mods["nanovllm.sampling_params"].SamplingParams,
        Config=SchedulerConfig,
    )


def schedule_steps(
    ns: types.SimpleNamespace,
    trace: list,
    config: SchedulerConfig,
    seed: int = 0,
    prefix_cache: bool = True,
    preempted: list[tuple[int, int]] | None = None,
) -> list[tuple[str, tuple[tuple[int, int], ...]]]:
    """The steps nano-vllm's ``Scheduler`` takes for ``trace`` (all requests queued at once).

    ``trace`` holds ``simulator.TraceRequest`` items. Prompts are distinct random tokens; the
    model is replaced by a token source that never emits EOS, so each request generates
    exactly ``output_len`` tokens. Returns, per step, its kind and (request id, new tokens).

    ``prefix_cache=False`` gives every block hash a fresh value, so that no lookup ever hits:
    the block manager then behaves as with prefix caching off, and the scheduler's own rules
    are left as they are. ``preempted``, if given, receives (step index, request id) for each
    preemption, in order.
    """
    rng = random.Random(seed)
    ns.Sequence.block_size = config.kvcache_block_size
    sched = ns.Scheduler(config)
    if not prefix_cache:
        fresh = iter(range(1 << 62, 1 << 63))
        sched.block_manager.compute_hash = lambda token_ids, prefix=-1: next(fresh)
    rid_of: dict[int, int] = {}
    steps: list[tuple[str, tuple[tuple[int, int], ...]]] = []
    if preempted is not None:
        original = sched.preempt

        def logged(seq: object) -> None:
            preempted.append((len(steps), rid_of[seq.seq_id]))  # type: ignore[attr-defined]
            original(seq)

        sched.preempt = logged
    for req in trace:
        prompt = [rng.randrange(1, 1 << 30) for _ in range(req.prompt_len)]
        seq = ns.Sequence(prompt, ns.SamplingParams(max_tokens=req.output_len, ignore_eos=True))
        rid_of[seq.seq_id] = req.rid
        sched.add(seq)
    while not sched.is_finished():
        seqs, is_prefill = sched.schedule()
        chunks = tuple((rid_of[s.seq_id], s.num_scheduled_tokens) for s in seqs)
        steps.append(("prefill" if is_prefill else "decode", chunks))
        sched.postprocess(seqs, [0] * len(seqs), is_prefill)
    return steps


def synthetic_trace(
    num_requests: int,
    *,
    rate: float = math.inf,
    prompt_len: tuple[int, int] = (128, 2048),
    output_len: tuple[int, int] = (16, 512),
    seed: int = 0,
) -> list[TraceRequest]:
    """Poisson arrivals at ``rate`` requests/s (all at t=0 when infinite), uniform lengths."""
    rng = random.Random(seed)
    t = 0.0
    trace = []
    for rid in range(num_requests):
        if math.isfinite(rate):
            t += rng.expovariate(rate)
        trace.append(TraceRequest(rid, t, rng.randint(*prompt_len), rng.randint(*output_len)))
    return trace


def chunked_ttft_closed_form(prompt_len: int, budget: int, decoding: int) -> int:
    """Steps until a prompt of ``prompt_len`` tokens yields its first token under mixed
    (chunked-prefill) steps with a token budget of ``budget``, while ``decoding`` sequences
    each take one token of every step: ``ceil(prompt_len / (budget - decoding))``."""
    return -(-prompt_len // (budget - decoding))


def distserve_goodput(
    make_trace: Callable[[float], list[TraceRequest]],
    policy: str,
    limits: object,
    cost: Callable[[list[tuple[int, int]]], float],
    ttft_slo: float,
    tpot_slo: float,
    target: float = 0.9,
    low: int = 1,
    high: int = 64,
) -> int:
    """DistServe's goodput: the highest arrival rate, in whole requests per second, at which
    at least ``target`` of the requests meet both objectives. Bisection between ``low`` (which
    must meet the target) and ``high`` (which must not), assuming attainment falls as the rate
    rises. ``make_trace(rate)`` builds the trace at a rate (the same seed at every rate)."""
    from atlas.labkit.serving.simulator import simulate

    def ok(rate: int) -> bool:
        run = simulate(make_trace(float(rate)), policy, limits, cost)  # type: ignore[arg-type]
        return run.attainment(ttft_slo, tpot_slo) >= target

    if not ok(low) or ok(high):
        raise ValueError(f"the target is not crossed between {low} and {high} requests/s")
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if ok(mid) else (low, mid)
    return low


def attainment(
    ttft: dict[int, float], tpot: dict[int, float], ttft_slo: float, tpot_slo: float
) -> float:
    """Share of requests that met both objectives (requests with one output token have no TPOT)."""
    ok = sum(1 for r in ttft if ttft[r] <= ttft_slo and tpot.get(r, 0.0) <= tpot_slo)
    return ok / len(ttft)


def colocated_latencies(
    trace: list[TraceRequest],
    limits: object,
    cost: Callable,
    replicas: int,
    policy: str = "chunked",
) -> tuple[dict[int, float], dict[int, float]]:
    """TTFT and TPOT of every request when ``replicas`` engines each serve both phases, the
    requests dealt out in turn."""
    from atlas.labkit.serving.simulator import simulate

    ttft: dict[int, float] = {}
    tpot: dict[int, float] = {}
    for k in range(replicas):
        share = [r for r in trace if r.rid % replicas == k]
        run = simulate(share, policy, limits, cost)  # type: ignore[arg-type]
        ttft.update(run.ttft)
        tpot.update(run.tpot)
    return ttft, tpot
