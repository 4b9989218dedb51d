"""Serving long multi-turn agent sessions: prefix reuse and tool latency.

An agent session sends one request per step, and each request repeats the whole conversation
so far: the system prompt and tool schemas, then every earlier message, then the newest input
(a user message or tool results). With ``S`` tokens of fixed prefix, ``n_t`` new input tokens
and ``o_t`` output tokens at step ``t``, the prompt of step ``t`` is

    P_t = S + sum_{i<t} (n_i + o_i) + n_t,

so an engine without prefix caching prefills ``sum_t P_t`` tokens, quadratic in the number of
steps, while one that keeps the previous step's cache prefills only ``S + sum_t n_t`` and one
token per later step: the output tokens already have their cache from decoding, except the
last one sampled, which was never run through the model. A block-granular cache (blocks of ``B``
tokens, never the block of the last prompt token) reuses a little less: :func:`cached_tokens`.

While a tool runs the session holds no GPU slot; :func:`slot_utilization` says how many
sessions keep ``slots`` decode slots busy when generation takes ``gen`` seconds and the tool
``tool`` seconds, and :func:`simulate_sessions` checks it by simulation.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from dataclasses import dataclass

ROLE = "taught"


@dataclass(frozen=True)
class Session:
    """Token counts of one session: fixed prefix, and per step new input and output."""

    prefix: int
    new: tuple[int, ...]
    out: tuple[int, ...]

    def prompt(self, t: int) -> int:
        """Prompt tokens of step ``t`` (0-based)."""
        return self.prefix + sum(self.new[: t + 1]) + sum(self.out[:t])


def prefill_without_cache(s: Session) -> int:
    return sum(s.prompt(t) for t in range(len(s.new)))


def prefill_with_cache(s: Session) -> int:
    """Prefilled tokens when each step reuses all of the previous step's cache: the prefix,
    every new input, and at each later step the previous step's last sampled token, whose KV
    was never computed."""
    return s.prefix + sum(s.new) + len(s.new) - 1


def cached_tokens(s: Session, block: int) -> list[int]:
    """Tokens each step finds in a block-granular prefix cache that kept the previous step's
    full blocks (its prompt and its output), without eviction.

    The last token a step samples is never fed back through the model, so its KV is never
    computed: step ``t - 1`` leaves ``P_{t-1} + o_{t-1} - 1`` tokens of cache, and the next
    step recomputes that one token (nano-vllm's ``hash_blocks`` hashes only blocks whose
    tokens were run)."""
    hits = [0]
    for t in range(1, len(s.new)):
        written = s.prompt(t - 1) + s.out[t - 1] - 1  # tokens whose cache step t-1 computed
        usable = (s.prompt(t) - 1) // block  # the last prompt token is always computed
        hits.append(min(written // block, usable) * block)
    return hits


def reuse_ratio(s: Session, block: int = 1) -> float:
    """Fraction of all prompt tokens that come from the cache."""
    return sum(cached_tokens(s, block)) / prefill_without_cache(s)


def slot_utilization(sessions: int, gen: float, tool: float, slots: int) -> float:
    """Fraction of decode slots busy: each session wants a slot ``gen / (gen + tool)`` of
    the time, so ``slots * (gen + tool) / gen`` sessions saturate them."""
    return min(1.0, sessions * gen / ((gen + tool) * slots))


def step_latency(sessions: int, gen: float, tool: float, slots: int) -> float:
    """Seconds per step of each session: a generation and a tool call, or, once the slots
    are saturated, the time for the slots to serve every session's generation once."""
    return max(gen + tool, sessions * gen / slots)


@dataclass(frozen=True)
class SessionStats:
    utilization: float  # busy slot-seconds over available slot-seconds
    steps_per_second: float
    mean_step_latency: float  # from asking for a slot to the tool's result


def simulate_sessions(
    sessions: int,
    gen: float,
    tool: float,
    slots: int,
    horizon: float = 2000.0,
    warmup: float = 200.0,
    jitter: float = 0.0,
    seed: int = 0,
) -> SessionStats:
    """Sessions alternate a generation that holds a slot and a tool call that does not."""
    rng = random.Random(seed)

    def draw(x: float) -> float:
        return x * (1 + rng.uniform(-jitter, jitter)) if jitter else x

    events: list[tuple[float, int, str, int]] = []
    order = 0

    def push(t: float, kind: str, s: int) -> None:
        nonlocal order
        heapq.heappush(events, (t, order, kind, s))
        order += 1

    free = slots
    queue: deque[int] = deque()
    asked = [0.0] * sessions
    for s in range(sessions):
        push(s * (gen + tool) / sessions, "ask", s)
    busy = 0.0
    steps, latency = 0, 0.0
    end = warmup + horizon

    def start(s: int, now: float) -> None:
        nonlocal free, busy
        free -= 1
        g = draw(gen)
        lo, hi = max(now, warmup), min(now + g, end)
        busy += max(0.0, hi - lo)
        push(now + g, "generated", s)

    while events:
        now, _, kind, s = heapq.heappop(events)
        if now > end:
            break
        if kind == "ask":
            asked[s] = now
            if free:
                start(s, now)
            else:
                queue.append(s)
        elif kind == "generated":
            free += 1
            if queue:
                start(queue.popleft(), now)
            push(now + draw(tool), "tool-done", s)
        else:
            if asked[s] >= warmup:
                steps += 1
                latency += now - asked[s]
            push(now, "ask", s)
    return SessionStats(
        busy / (slots * horizon), steps / horizon, latency / steps if steps else 0.0
    )
