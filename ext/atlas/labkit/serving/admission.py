"""Admission that reserves cache for future decode tokens, and retraction when it runs out.

The policy that ``serving/scheduler.md`` describes for SGLang: a waiting request is admitted
only if the free cache covers its prompt *and* an estimate of the tokens that it and every
running request will still generate, each request's remaining ``max_new_tokens`` times a
*new-token ratio*. The ratio falls by ``decay`` after every decode step that went well, down to
``min_ratio``; when a decode step finds the cache full, the newest running requests are
retracted (their cache freed, put back at the head of the queue, to be recomputed) and the
ratio is raised back to ``init_ratio``. ``init_ratio = min_ratio = 0`` is nano-vllm's policy:
admit whenever the prompt fits, preempt when a decode does not.

The cache is counted in token slots (a block of one token); a
request holds one slot per token whose keys and values it has computed.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

ROLE = "taught"


@dataclass(frozen=True)
class AdmissionRequest:
    """A request as the admission rule sees it: the prompt, the cap the client declared
    (``max_new_tokens``), and the length it will really generate (``output_len``, known only
    to the simulation; requests stop at an end-of-sequence token before the cap)."""

    rid: int
    prompt_len: int
    max_new_tokens: int
    output_len: int


@dataclass(frozen=True)
class AdmissionStep:
    """One step: its kind, the (request, tokens computed) pairs it ran, and the requests that
    were retracted before it ran."""

    kind: str
    chunks: tuple[tuple[int, int], ...]
    retracted: tuple[int, ...] = ()


@dataclass
class AdmissionRun:
    """The steps taken, the retractions and the tokens they threw away (to be computed again),
    and the idle cache: the sum over the steps at which some request waited of the slots left
    free after the step."""

    steps: list[AdmissionStep] = field(default_factory=list)
    retractions: int = 0
    discarded_tokens: int = 0
    idle_slot_steps: int = 0
    waiting_steps: int = 0
    peak_used: int = 0

    def idle_share(self, capacity: int) -> float:
        """Mean share of the cache left free after the steps at which some request waited."""
        return self.idle_slot_steps / (capacity * self.waiting_steps)


def simulate_admission(
    requests: list[AdmissionRequest],
    capacity: int,
    *,
    init_ratio: float,
    min_ratio: float,
    decay: float,
    max_prefill_tokens: int = 8192,
) -> AdmissionRun:
    """Run the requests (all queued at once, first come first served) through admission with
    a new-token ratio and retraction on a cache of ``capacity`` slots.

    Each step is a prefill step if the head of the queue can be admitted (then as many as fit,
    up to ``max_prefill_tokens`` computed tokens), otherwise a decode step of every running
    request. A request retracted after generating ``g`` tokens recomputes its prompt and those
    ``g`` tokens when it is admitted again.
    """
    if any(r.prompt_len + r.output_len > capacity for r in requests):
        raise ValueError("a request does not fit in the cache even alone")
    waiting = deque(requests)
    running: list[AdmissionRequest] = []
    generated = {r.rid: 0 for r in requests}
    held = {r.rid: 0 for r in requests}
    used = 0
    ratio = init_ratio
    run = AdmissionRun()

    def future(r: AdmissionRequest) -> float:
        return ratio * (r.max_new_tokens - generated[r.rid])

    def finish(r: AdmissionRequest) -> None:
        nonlocal used
        used -= held[r.rid]
        held[r.rid] = 0
        running.remove(r)

    while waiting or running:
        admitted: list[tuple[AdmissionRequest, int]] = []
        reserve = sum(future(r) for r in running)
        budget = max_prefill_tokens
        while waiting:
            r = waiting[0]
            need = r.prompt_len + generated[r.rid]
            alone = not running and not admitted  # an empty engine takes the head regardless
            if not alone and (used + need + reserve + future(r) > capacity or need > budget):
                break
            waiting.popleft()
            admitted.append((r, need))
            used += need
            held[r.rid] = need
            reserve += future(r)
            budget -= need
        if admitted:
            kind, chunks, retracted = "prefill", tuple((r.rid, n) for r, n in admitted), ()
            running += [r for r, _ in admitted]
            stepped = [r for r, _ in admitted]
        else:
            victims = []
            while used + len(running) > capacity and running:
                victim = running.pop()  # the newest admitted
                used -= held[victim.rid]
                run.discarded_tokens += held[victim.rid]
                held[victim.rid] = 0
                waiting.appendleft(victim)
                victims.append(victim.rid)
            ratio = init_ratio if victims else max(min_ratio, ratio - decay)
            run.retractions += len(victims)
            for r in running:
                held[r.rid] += 1
            used += len(running)
            kind, chunks, retracted = "decode", tuple((r.rid, 1) for r in running), tuple(victims)
            stepped = list(running)
        run.peak_used = max(run.peak_used, used)
        for r in stepped:
            generated[r.rid] += 1
            if generated[r.rid] == r.output_len:
                finish(r)
        if waiting:
            run.idle_slot_steps += capacity - used
            run.waiting_steps += 1
        run.steps.append(AdmissionStep(kind, chunks, retracted))
    return run
