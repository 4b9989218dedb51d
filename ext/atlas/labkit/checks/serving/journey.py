"""Checks of the labs of ``serving/journey.md``.

nano-vllm's own sampler, run from its source at the pin, against the distribution it is
meant to sample.
"""

from __future__ import annotations

import types

import torch

from atlas.labkit.checks.serving.common import UPSTREAM
from atlas.labkit.pinned import definitions, package

ROLE = "check"


def nano_vllm_sampler_frequencies(
    probs: torch.Tensor, temperature: float, n: int, seed: int = 0
) -> torch.Tensor:
    """Token frequencies of ``n`` draws by nano-vllm's ``Sampler.forward`` (the exponential
    race, nanovllm/layers/sampler.py at the pin; its ``torch.compile`` decorator dropped),
    given the logits ``log(probs)`` repeated ``n`` times and one temperature for all rows."""
    forward = definitions(
        "nano-vllm", "nanovllm/layers/sampler.py", ("Sampler.forward",), {"torch": torch}
    )["forward"]
    torch.manual_seed(seed)  # the sampler draws from torch's global generator
    logits = probs.log().to(torch.float32).expand(n, -1).contiguous()
    temperatures = torch.full((n,), temperature, dtype=torch.float32)
    tokens = forward(None, logits, temperatures)
    return torch.bincount(tokens, minlength=probs.numel()).to(torch.float64) / n


# --- The Sequence state machine, observed in nano-vllm's own Scheduler ----------------------


def observed_transitions(
    ns: types.SimpleNamespace, prompts: list[int], max_tokens: list[int], config: object
) -> tuple[list[tuple[int, int, str, str]], list[str], list[tuple[str, str]]]:
    """Run nano-vllm's ``Scheduler`` (``load_scheduler``) on prompts of the given lengths and
    record every change of a sequence's ``status``, after ``schedule`` and after
    ``postprocess``, as (step, request, old, new). Also returns one line per step (its kind;
    per request its status, length, cached tokens and block table after the step) and what
    ``__getstate__`` (the pickle that reaches tensor-parallel workers) ships for each request
    scheduled in a step: the whole token list in a prefill step, one token id in a decode
    step, as (step kind, payload type). The model is a token source that never emits EOS."""
    ns.Sequence.block_size = config.kvcache_block_size  # type: ignore[attr-defined]
    sched = ns.Scheduler(config)
    seqs = [
        ns.Sequence(
            [1000 * (r + 1) + i for i in range(n)],
            ns.SamplingParams(max_tokens=m, ignore_eos=True),
        )
        for r, (n, m) in enumerate(zip(prompts, max_tokens, strict=True))
    ]
    for seq in seqs:
        sched.add(seq)
    rid = {seq.seq_id: r for r, seq in enumerate(seqs)}
    status = {seq.seq_id: seq.status.name for seq in seqs}
    changes: list[tuple[int, int, str, str]] = []
    lines: list[str] = []
    shipped: set[tuple[str, str]] = set()

    def record(step: int) -> None:
        for seq in seqs:
            if seq.status.name != status[seq.seq_id]:
                changes.append((step, rid[seq.seq_id], status[seq.seq_id], seq.status.name))
                status[seq.seq_id] = seq.status.name

    step = 0
    while not sched.is_finished():
        scheduled, is_prefill = sched.schedule()
        record(step)
        kind = "prefill" if is_prefill else "decode"
        shipped |= {(kind, type(s.__getstate__()[-1]).__name__) for s in scheduled}
        sched.postprocess(scheduled, [7] * len(scheduled), is_prefill)
        record(step)
        cells = [
            f"{s.status.name[0]} len {len(s):>2} cached {s.num_cached_tokens:>2} {s.block_table}"
            for s in seqs
        ]
        lines.append(f"{step} {kind:<7} " + " | ".join(cells))
        step += 1
    return changes, lines, sorted(shipped)


# --- The attention Context that prepare_prefill / prepare_decode build -----------------------


class _Pinned:
    """``torch`` for ``prepare_prefill``/``prepare_decode`` on a machine without CUDA:
    ``torch.tensor(..., pin_memory=True).cuda(non_blocking=True)`` becomes a CPU tensor."""

    class _Tensor(torch.Tensor):
        def cuda(self, *args: object, **kwargs: object) -> torch.Tensor:  # type: ignore[override]
            return torch.Tensor(self)

    def __getattr__(self, name: str) -> object:
        return getattr(torch, name)

    def tensor(self, data: object, dtype: torch.dtype, pin_memory: bool = False) -> torch.Tensor:
        return torch.tensor(data, dtype=dtype).as_subclass(self._Tensor)


CONTEXT_FILES = ("nanovllm/utils/context.py",)
PREPARE = (
    "ModelRunner.prepare_block_tables",
    "ModelRunner.prepare_prefill",
    "ModelRunner.prepare_decode",
)


def _prepare(block_size: int) -> tuple[types.ModuleType, object, types.SimpleNamespace]:
    """nano-vllm's ``utils/context.py``, the three ``ModelRunner`` methods of ``PREPARE`` run
    against it, and a stand-in ``self`` for them with the given block size."""
    context = package(UPSTREAM, CONTEXT_FILES)["nanovllm.utils.context"]
    scope = definitions(
        UPSTREAM,
        "nanovllm/engine/model_runner.py",
        PREPARE,
        {"torch": _Pinned(), "set_context": context.set_context},
    )
    runner = types.SimpleNamespace(block_size=block_size)
    runner.prepare_block_tables = lambda seqs: scope["prepare_block_tables"](runner, seqs)
    return context, scope, runner


def prefill_context(
    ns: types.SimpleNamespace, chunks: list[tuple[list[int], int, int]], block_size: int
) -> object:
    """The ``Context`` that nano-vllm's ``prepare_prefill`` sets for a prefill step of the given
    chunks, each (block table, cached tokens, scheduled tokens), on sequences whose token ids
    are stand-ins (attention metadata does not depend on them)."""
    context, scope, runner = _prepare(block_size)
    ns.Sequence.block_size = block_size
    seqs = []
    for table, cached, scheduled in chunks:
        seq = ns.Sequence(list(range(1, cached + scheduled + 1)))
        seq.block_table, seq.num_cached_tokens = list(table), cached
        seq.num_scheduled_tokens = scheduled
        seqs.append(seq)
    scope["prepare_prefill"](runner, seqs)
    return context.get_context()


def contexts_of_run(
    ns: types.SimpleNamespace,
    prompts: list[list[int]],
    max_tokens: int,
    config: object,
) -> list[tuple[list, object]]:
    """Drive nano-vllm's ``Scheduler`` over ``prompts`` (token lists; shared prefixes hit the
    prefix cache) and, at every step, run nano-vllm's own ``ModelRunner.prepare_prefill`` or
    ``prepare_decode`` (method bodies at the pin, with nano-vllm's ``utils/context.py``) on
    the scheduled sequences. Returns, per step, a snapshot of each scheduled sequence
    (block table, cached and scheduled tokens, length) and the ``Context`` the step set."""
    context, scope, runner = _prepare(config.kvcache_block_size)  # type: ignore[attr-defined]
    ns.Sequence.block_size = config.kvcache_block_size  # type: ignore[attr-defined]
    sched = ns.Scheduler(config)
    for prompt in prompts:
        sched.add(ns.Sequence(prompt, ns.SamplingParams(max_tokens=max_tokens, ignore_eos=True)))
    out: list[tuple[list, object]] = []
    while not sched.is_finished():
        seqs, is_prefill = sched.schedule()
        prepare = scope["prepare_prefill" if is_prefill else "prepare_decode"]
        prepare(runner, seqs)
        snap = [
            types.SimpleNamespace(
                block_table=list(s.block_table),
                cached=s.num_cached_tokens,
                scheduled=s.num_scheduled_tokens,
                length=len(s),
                prefill=is_prefill,
            )
            for s in seqs
        ]
        out.append((snap, context.get_context()))
        context.reset_context()
        sched.postprocess(seqs, [7] * len(seqs), is_prefill)
    return out


def brute_force_slots(snapshots: list, block_size: int) -> list[int]:
    """The cache slot of every token a step writes, from the block tables alone: token at
    position ``p`` of a sequence lives in block ``block_table[p // block_size]`` at offset
    ``p % block_size``. A prefill step writes positions ``cached .. cached + scheduled - 1``;
    a decode step writes the one position ``length - 1``."""
    slots = []
    for s in snapshots:
        positions = (
            range(s.cached, s.cached + s.scheduled) if s.prefill else range(s.length - 1, s.length)
        )
        slots += [s.block_table[p // block_size] * block_size + p % block_size for p in positions]
    return slots


# --- The published benchmark, re-derived from bench.py at the pin ----------------------------


def bench_workload() -> dict[str, int]:
    """Run ``main`` of nano-vllm's ``bench.py`` at the pin with the engine replaced by a recorder
    (and ``time.time`` by a counter), so that its seeded ``random`` draws the same 256 prompts
    and output lengths as the published run. Returns request count, prompt tokens and output
    tokens (``ignore_eos=True``, so each request generates exactly ``max_tokens``)."""
    import os
    import random

    seen: dict[str, list] = {}

    class Recorder:
        def __init__(self, path: str, **kwargs: object) -> None:
            pass

        def generate(self, prompts: list, params: object, use_tqdm: bool = True) -> None:
            if isinstance(params, list):  # the timed call; the warm-up passes one object
                seen["prompts"], seen["params"] = prompts, params

    sampling = package(UPSTREAM, ("nanovllm/sampling_params.py",))["nanovllm.sampling_params"]
    clock = types.SimpleNamespace(time=iter(range(10**6)).__next__)
    main = definitions(
        UPSTREAM,
        "bench.py",
        ("main",),
        {
            "os": os,
            "time": clock,
            "randint": random.randint,
            "seed": random.seed,
            "LLM": Recorder,
            "SamplingParams": sampling.SamplingParams,
            "print": lambda *a, **k: None,
        },
    )["main"]
    main()
    return {
        "requests": len(seen["prompts"]),
        "prompt_tokens": sum(len(p) for p in seen["prompts"]),
        "output_tokens": sum(sp.max_tokens for sp in seen["params"]),
    }


def contexts_agree(run: list[tuple[list, object]], block_size: int) -> dict[str, int | bool]:
    """Compare every step's ``Context`` from :func:`contexts_of_run` with what the block tables
    and counters say it must hold: the slots of :func:`brute_force_slots`; in prefill the
    cumulative query and key lengths (``scheduled`` and ``cached + scheduled``) and block
    tables exactly when some chunk has cached tokens; in decode each sequence's length as
    its context length and its block table, padded with -1."""
    ok = True
    counts = {"prefill": 0, "decode": 0, "prefill_with_block_tables": 0}
    for snaps, ctx in run:
        ok &= ctx.slot_mapping.tolist() == brute_force_slots(snaps, block_size)
        width = max(len(s.block_table) for s in snaps)
        tables = [s.block_table + [-1] * (width - len(s.block_table)) for s in snaps]
        if snaps[0].prefill:
            counts["prefill"] += 1
            q = [0]
            k = [0]
            for s in snaps:
                q.append(q[-1] + s.scheduled)
                k.append(k[-1] + s.cached + s.scheduled)
            ok &= ctx.cu_seqlens_q.tolist() == q and ctx.cu_seqlens_k.tolist() == k
            ok &= ctx.max_seqlen_q == max(s.scheduled for s in snaps)
            ok &= ctx.max_seqlen_k == max(s.cached + s.scheduled for s in snaps)
            if any(s.cached for s in snaps):
                counts["prefill_with_block_tables"] += 1
                ok &= ctx.block_tables is not None and ctx.block_tables.tolist() == tables
            else:
                ok &= ctx.block_tables is None
        else:
            counts["decode"] += 1
            ok &= ctx.context_lens.tolist() == [s.length for s in snaps]
            ok &= ctx.block_tables.tolist() == tables
    return {**counts, "all_agree": bool(ok)}
