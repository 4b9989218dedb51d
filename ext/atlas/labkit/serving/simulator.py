"""A request-trace simulator of an LLM engine's scheduler, timed by the roofline.

Three policies run the same trace on the same cost model:

``static``
    Take up to ``max_num_seqs`` arrived requests, prefill them padded to the longest prompt,
    decode until the longest answer is done, then take the next batch. Finished sequences
    keep their slot; newcomers wait for the whole batch.
``continuous``
    nano-vllm's policy at its pin, step for step: every step is either a prefill step
    (waiting requests first, within the token budget, only the first one may be chunked) or
    a decode step over the running sequences; a sequence that finds no free block for its
    next token preempts the most recently admitted one, whose KV is freed and recomputed.
``chunked``
    Mixed steps in the manner of SARATHI and vLLM's V1 scheduler: every running sequence
    takes its next tokens (one when decoding, a chunk when still prefilling) within the
    token budget, then waiting requests fill what is left of it.

Each step lasts ``cost(chunks)`` seconds, where ``chunks`` lists (cached tokens, new tokens)
per sequence; ``roofline_cost`` charges the larger of FLOPs over peak and bytes over bandwidth.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from atlas.labkit.serving.models import ModelConfig
from atlas.labkit.serving.roofline import Gpu, step_cost

ROLE = "taught"

Cost = Callable[[list[tuple[int, int]]], float]


@dataclass(frozen=True)
class TraceRequest:
    rid: int
    arrival: float
    prompt_len: int
    output_len: int


@dataclass(frozen=True)
class EngineLimits:
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    num_blocks: int = 4096
    block_size: int = 16


@dataclass
class _Seq:
    req: TraceRequest
    num_tokens: int
    num_computed: int = 0
    num_blocks: int = 0
    generated: int = 0
    first_token: float | None = None
    finish: float | None = None
    preemptions: int = 0
    scheduled: int = 0


@dataclass(frozen=True)
class StepRecord:
    start: float
    duration: float
    kind: str  # "prefill", "decode" or "mixed"
    chunks: tuple[tuple[int, int], ...]  # (request id, new tokens)


@dataclass
class SimResult:
    policy: str
    steps: list[StepRecord] = field(default_factory=list)
    ttft: dict[int, float] = field(default_factory=dict)
    tpot: dict[int, float] = field(default_factory=dict)
    e2e: dict[int, float] = field(default_factory=dict)
    output_tokens: int = 0
    preemptions: int = 0
    discarded_tokens: int = 0  # cached tokens thrown away by preemption, to be recomputed
    preempted: list[tuple[int, int]] = field(default_factory=list)  # (step index, request id)

    @property
    def makespan(self) -> float:
        return self.steps[-1].start + self.steps[-1].duration if self.steps else 0.0

    @property
    def throughput(self) -> float:
        """Output tokens per second over the whole run."""
        return self.output_tokens / self.makespan

    def met(self, ttft_slo: float, tpot_slo: float) -> int:
        """Requests that met both latency objectives (TTFT and TPOT) in this run."""
        return sum(
            1 for r in self.ttft if self.ttft[r] <= ttft_slo and self.tpot.get(r, 0.0) <= tpot_slo
        )

    def attainment(self, ttft_slo: float, tpot_slo: float) -> float:
        """The share of requests that met both objectives: DistServe's SLO attainment."""
        return self.met(ttft_slo, tpot_slo) / len(self.ttft)

    def goodput(self, ttft_slo: float, tpot_slo: float) -> float:
        """Requests that met both objectives per second of this run (a per-run count, not
        DistServe's goodput, which is the highest arrival rate at which a target share of
        requests meets them; ``checks.serving.common.distserve_goodput`` searches for that rate)."""
        return self.met(ttft_slo, tpot_slo) / self.makespan

    def summary(self, ttft_slo: float = 1.0, tpot_slo: float = 0.05) -> dict[str, float]:
        ttft, tpot = sorted(self.ttft.values()), sorted(self.tpot.values())
        return {
            "throughput_tok_s": round(self.throughput),
            "mean_ttft_s": round(sum(ttft) / len(ttft), 3),
            "p99_ttft_s": round(_percentile(ttft, 0.99), 3),
            "mean_tpot_ms": round(1000 * sum(tpot) / len(tpot), 1),
            "p99_tpot_ms": round(1000 * _percentile(tpot, 0.99), 1),
            "goodput_req_s": round(self.goodput(ttft_slo, tpot_slo), 2),
            "makespan_s": round(self.makespan, 2),
            "steps": len(self.steps),
            "preemptions": self.preemptions,
            "discarded_tokens": self.discarded_tokens,
        }


def _percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, math.ceil(q * len(sorted_values)) - 1)]


def roofline_cost(model: ModelConfig, gpu: Gpu, overhead_s: float = 0.0) -> Cost:
    """Step time: the roofline bound of the step's FLOPs and bytes, plus a fixed overhead."""

    def cost(chunks: list[tuple[int, int]]) -> float:
        return step_cost(model, gpu, chunks).time_s + overhead_s

    return cost


class _Engine:
    """Shared state of the continuous policies: queues, the block pool, the clock."""

    def __init__(self, trace: list[TraceRequest], limits: EngineLimits, cost: Cost, policy: str):
        self.pending = deque(sorted(trace, key=lambda r: (r.arrival, r.rid)))
        self.limits = limits
        self.cost = cost
        self.free_blocks = limits.num_blocks
        self.waiting: deque[_Seq] = deque()
        self.running: deque[_Seq] = deque()
        self.now = 0.0
        self.result = SimResult(policy)

    def blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.limits.block_size)

    def admit_arrivals(self) -> None:
        while self.pending and self.pending[0].arrival <= self.now:
            req = self.pending.popleft()
            self.waiting.append(_Seq(req, req.prompt_len))

    def idle_until_arrival(self) -> bool:
        """Jump the clock to the next arrival when nothing is queued; False when all done."""
        self.admit_arrivals()
        if self.waiting or self.running:
            return True
        if not self.pending:
            return False
        self.now = self.pending[0].arrival
        self.admit_arrivals()
        return True

    def free(self, seq: _Seq) -> None:
        self.free_blocks += seq.num_blocks
        seq.num_blocks = 0

    def preempt(self, seq: _Seq) -> None:
        """Free the sequence's KV and queue it first; its tokens will be recomputed."""
        self.free(seq)
        self.result.discarded_tokens += seq.num_computed
        seq.num_computed = 0
        seq.preemptions += 1
        self.result.preemptions += 1
        self.result.preempted.append((len(self.result.steps), seq.req.rid))
        self.waiting.appendleft(seq)

    def can_append(self, seq: _Seq) -> bool:
        return self.free_blocks >= (seq.num_tokens % self.limits.block_size == 1)

    def append_slot(self, seq: _Seq) -> None:
        if seq.num_tokens % self.limits.block_size == 1:
            seq.num_blocks += 1
            self.free_blocks -= 1

    def run_step(self, seqs: list[_Seq], kind: str) -> None:
        chunks = [(s.num_computed, s.scheduled) for s in seqs]
        duration = self.cost(chunks)
        record = tuple((s.req.rid, s.scheduled) for s in seqs)
        self.result.steps.append(StepRecord(self.now, duration, kind, record))
        self.now += duration
        for seq in seqs:
            seq.num_computed += seq.scheduled
            seq.scheduled = 0
            if seq.num_computed < seq.num_tokens:
                continue  # a prefill chunk: no token yet
            seq.generated += 1
            seq.num_tokens += 1
            if seq.first_token is None:
                seq.first_token = self.now
            if seq.generated == seq.req.output_len:
                seq.finish = self.now
                self.free(seq)
                self.running.remove(seq)
                self.record(seq)

    def record(self, seq: _Seq) -> None:
        req, res = seq.req, self.result
        assert seq.first_token is not None and seq.finish is not None
        res.ttft[req.rid] = seq.first_token - req.arrival
        res.e2e[req.rid] = seq.finish - req.arrival
        if req.output_len > 1:
            res.tpot[req.rid] = (seq.finish - seq.first_token) / (req.output_len - 1)
        res.output_tokens += req.output_len


def _continuous_step(eng: _Engine) -> None:
    """One step of nano-vllm's ``Scheduler.schedule`` (prefix cache left out)."""
    lim = eng.limits
    scheduled: list[_Seq] = []
    batched = 0
    while eng.waiting and len(scheduled) < lim.max_num_seqs:
        seq = eng.waiting[0]
        remaining = lim.max_num_batched_tokens - batched
        if remaining == 0:
            break
        fresh = seq.num_blocks == 0
        if fresh and eng.free_blocks < eng.blocks_for(seq.num_tokens):
            break
        num_tokens = seq.num_tokens - seq.num_computed
        if remaining < num_tokens and scheduled:
            break
        if fresh:
            seq.num_blocks = eng.blocks_for(seq.num_tokens)
            eng.free_blocks -= seq.num_blocks
        seq.scheduled = min(num_tokens, remaining)
        batched += seq.scheduled
        if seq.num_computed + seq.scheduled == seq.num_tokens:
            eng.waiting.popleft()
            eng.running.append(seq)
        scheduled.append(seq)
    if scheduled:
        eng.run_step(scheduled, "prefill")
        return
    while eng.running and len(scheduled) < lim.max_num_seqs:
        seq = eng.running.popleft()
        while not eng.can_append(seq):
            if eng.running:
                eng.preempt(eng.running.pop())
            else:
                eng.preempt(seq)
                break
        else:
            seq.scheduled = 1
            eng.append_slot(seq)
            scheduled.append(seq)
    eng.running.extendleft(reversed(scheduled))
    eng.run_step(scheduled, "decode")


def _chunked_step(eng: _Engine) -> None:
    """One mixed step: running sequences first (decode or next chunk), then waiting ones."""
    lim = eng.limits
    budget = lim.max_num_batched_tokens
    scheduled: list[_Seq] = []
    for seq in list(eng.running):
        if budget == 0:
            break
        if seq.num_blocks == 0:  # preempted earlier in this step
            continue
        want = min(seq.num_tokens - seq.num_computed, budget)
        need = eng.blocks_for(seq.num_computed + want) - seq.num_blocks
        while need > eng.free_blocks:
            victim = eng.running.pop()
            eng.preempt(victim)
            if victim is seq:
                break
        if seq.num_blocks == 0:
            continue
        seq.num_blocks += need
        eng.free_blocks -= need
        seq.scheduled = want
        budget -= want
        scheduled.append(seq)
    while eng.waiting and budget > 0 and len(eng.running) < lim.max_num_seqs:
        seq = eng.waiting[0]
        want = min(seq.num_tokens, budget)
        need = eng.blocks_for(want)
        if need > eng.free_blocks:
            break
        eng.waiting.popleft()
        seq.num_blocks, seq.scheduled = need, want
        eng.free_blocks -= need
        budget -= want
        eng.running.append(seq)
        scheduled.append(seq)
    eng.run_step(scheduled, "mixed")


def _static_run(eng: _Engine) -> None:
    lim = eng.limits
    while eng.idle_until_arrival():
        batch: list[_Seq] = []
        while eng.waiting and len(batch) < lim.max_num_seqs:
            cand = batch + [eng.waiting[0]]
            longest = max(s.req.prompt_len for s in cand) + max(s.req.output_len for s in cand)
            if eng.blocks_for(longest) * len(cand) > lim.num_blocks:
                break
            batch.append(eng.waiting.popleft())
        if not batch:
            raise ValueError("one request alone does not fit in the KV cache")
        prompt = max(s.req.prompt_len for s in batch)
        steps = max(s.req.output_len for s in batch)
        for i in range(steps):
            chunks = [(0, prompt)] * len(batch) if i == 0 else [(prompt + i - 1, 1)] * len(batch)
            duration = eng.cost(chunks)
            kind = "prefill" if i == 0 else "decode"
            live = tuple((s.req.rid, chunks[0][1]) for s in batch)
            eng.result.steps.append(StepRecord(eng.now, duration, kind, live))
            eng.now += duration
            for seq in batch:
                if seq.generated < seq.req.output_len:
                    seq.generated += 1
                    if seq.first_token is None:
                        seq.first_token = eng.now
                    if seq.generated == seq.req.output_len:
                        seq.finish = eng.now
                        eng.record(seq)
        eng.admit_arrivals()


def simulate(trace: list[TraceRequest], policy: str, limits: EngineLimits, cost: Cost) -> SimResult:
    """Run ``trace`` under ``policy`` ("static", "continuous" or "chunked") until all finish."""
    eng = _Engine(trace, limits, cost, policy)
    if policy == "static":
        _static_run(eng)
        return eng.result
    step = {"continuous": _continuous_step, "chunked": _chunked_step}.get(policy)
    if step is None:
        raise ValueError(f"unknown policy {policy!r}; use static, continuous or chunked")
    for req in trace:
        if eng.blocks_for(req.prompt_len + req.output_len) > limits.num_blocks:
            raise ValueError(f"request {req.rid} alone does not fit in {limits.num_blocks} blocks")
    while eng.idle_until_arrival():
        step(eng)
    return eng.result
