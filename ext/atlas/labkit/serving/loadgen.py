"""Load generators for benchmarking a serving engine: open loop, closed loop, a capped client.

An *open-loop* generator sends requests at times fixed in advance (a Poisson process at a
rate), whatever the server does; a *closed-loop* generator has ``users`` clients that each send
one request, wait for its answer, think, and send the next, so a slow server slows the load
itself. The book's simulator (``serving/simulator.py``) takes an open-loop trace; the closed
loop and the capped client need feedback from the server, so they run here as a small
discrete-event model of one FIFO server whose service times come from the simulator's own step
costs (``batch1_service_time``).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass

from atlas.labkit.serving.simulator import Cost, TraceRequest

ROLE = "taught"


def poisson_trace(
    num_requests: int, rate: float, prompt_len: int, output_len: int, seed: int = 0
) -> list[TraceRequest]:
    """Open-loop arrivals: exponential gaps of mean ``1 / rate``, fixed request shapes."""
    rng = random.Random(seed)
    t, trace = 0.0, []
    for rid in range(num_requests):
        t += rng.expovariate(rate)
        trace.append(TraceRequest(rid, t, prompt_len, output_len))
    return trace


def batch1_service_time(cost: Cost, prompt_len: int, output_len: int) -> float:
    """Seconds a batch-1 engine spends on one request: one prefill step over the prompt, then
    ``output_len - 1`` decode steps, each over the tokens cached so far (the steps the
    simulator's ``static`` policy takes with ``max_num_seqs=1``)."""
    steps = [[(0, prompt_len)]] + [[(prompt_len + i - 1, 1)] for i in range(1, output_len)]
    return sum(cost(chunks) for chunks in steps)


@dataclass(frozen=True)
class Served:
    """One request as the client saw it: when it was meant to go, sent, started, finished."""

    intended: float  # when the load model wanted to send it
    sent: float  # when the client actually sent it (later only under a concurrency cap)
    start: float  # when the server began its service
    finish: float

    @property
    def latency(self) -> float:
        """What a user waits: from the intended send time to the answer."""
        return self.finish - self.intended

    @property
    def measured(self) -> float:
        """What a benchmark that starts its clock at send time reports."""
        return self.finish - self.sent


def fifo(sent: list[float], service: list[float]) -> list[tuple[float, float]]:
    """(start, finish) of each request at one FIFO server, in order of ``sent`` (Lindley's
    recursion: a request starts when it has arrived and the one before it has finished)."""
    free, out = 0.0, []
    for t, s in zip(sent, service, strict=True):
        start = max(t, free)
        free = start + s
        out.append((start, free))
    return out


def capped_open_loop(
    intended: list[float], service: list[float], max_concurrency: int
) -> list[Served]:
    """An open-loop schedule sent through a client that allows at most ``max_concurrency``
    requests in flight (vLLM's and SGLang's ``--max-concurrency``): a request that finds the
    cap reached waits in the client until an earlier one finishes, then is sent."""
    in_flight: list[float] = []  # finish times of the requests in flight (a heap)
    free, out = 0.0, []
    for t, s in zip(intended, service, strict=True):
        while in_flight and in_flight[0] <= t:
            heapq.heappop(in_flight)
        sent = t if len(in_flight) < max_concurrency else heapq.heappop(in_flight)
        start = max(sent, free)
        free = start + s
        heapq.heappush(in_flight, free)
        out.append(Served(t, sent, start, free))
    return out


def closed_loop(
    users: int,
    think: Callable[[random.Random], float],
    service: Callable[[random.Random], float],
    num_requests: int,
    seed: int = 0,
) -> list[Served]:
    """``users`` clients against one FIFO server: each thinks (``think(rng)`` seconds), sends,
    waits for the answer, and thinks again. Returns the first ``num_requests`` answers in
    order of sending."""
    rng = random.Random(seed)
    ready = [(think(rng), u) for u in range(users)]  # (send time, user)
    heapq.heapify(ready)
    free, out = 0.0, []
    while len(out) < num_requests:
        sent, user = heapq.heappop(ready)
        start = max(sent, free)
        free = start + service(rng)
        out.append(Served(sent, sent, start, free))
        heapq.heappush(ready, (free + think(rng), user))
    return out
