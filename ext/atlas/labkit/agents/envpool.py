"""Environments for agentic RL rollouts: start-up latency, warm pools and host capacity.

A rollout worker takes a fresh environment (a sandbox restored from a snapshot), runs one
episode in it for ``episode`` seconds, and throws it away. Starting an environment takes
``startup`` seconds. Started on demand, every episode waits for its environment. A pool keeps
``pool`` environments ready or starting and begins a replacement the moment one is taken; by
Little's law, ``rate * startup`` of them are starting at any time, where ``rate`` is the rate
at which workers take them, so a pool of ``ceil(rate * startup)`` hides start-up entirely.

:class:`WatermarkPool` is the refill policy of AgentENV's ``warm-pool`` crate at its pin: the
pool refills toward a target that starts at the low watermark and doubles, up to the high
watermark, each time an acquisition leaves fewer than the low watermark idle.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass

ROLE = "taught"


def demand_rate(workers: int, episode: float) -> float:
    """Environments per second that ``workers`` take when none of them ever waits."""
    return workers / episode


def pool_to_hide_startup(workers: int, episode: float, startup: float) -> int:
    """The smallest pool with which no worker waits (fixed episode and start-up times)."""
    return math.ceil(demand_rate(workers, episode) * startup - 1e-9)


def throughput_closed_form(workers: int, episode: float, startup: float, pool: int) -> float:
    """Episodes per second in steady state. ``pool=0`` means start on demand."""
    if pool == 0:
        return workers / (episode + startup)
    return min(workers / episode, pool / startup)


@dataclass(frozen=True)
class RolloutStats:
    episodes: int
    throughput: float  # episodes per second over the measured window
    mean_wait: float  # seconds a worker waited for an environment, per episode


def simulate_rollouts(
    workers: int,
    episode: float,
    startup: float,
    pool: int,
    horizon: float = 600.0,
    warmup: float = 100.0,
    jitter: float = 0.0,
    seed: int = 0,
) -> RolloutStats:
    """Event-driven simulation of ``workers`` running episodes back to back.

    ``pool=0`` starts each environment on demand. Otherwise ``pool`` environments are ready
    at time 0 and each one taken triggers a replacement that is ready ``startup`` seconds
    later. Workers start staggered over one episode. With ``jitter`` > 0, episode times are
    drawn uniformly in ``episode * (1 +- jitter)``. Only episodes that start after ``warmup``
    are measured."""
    rng = random.Random(seed)
    events: list[tuple[float, int, str, int]] = []  # (time, order, kind, worker)
    order = 0

    def push(t: float, kind: str, w: int = -1) -> None:
        nonlocal order
        heapq.heappush(events, (t, order, kind, w))
        order += 1

    ready = pool
    waiting: deque[tuple[int, float]] = deque()
    for w in range(workers):
        push(w * episode / workers, "want", w)
    done, waited = 0, 0.0

    def begin(w: int, asked: float, now: float) -> None:
        nonlocal done, waited
        length = episode * (1 + rng.uniform(-jitter, jitter)) if jitter else episode
        if now >= warmup:
            done += 1
            waited += now - asked
        push(now + length, "want", w)

    while events:
        now, _, kind, w = heapq.heappop(events)
        if now > warmup + horizon:
            break
        if kind == "want":
            if pool == 0:
                push(now + startup, "started", w)  # this worker's own environment
                waiting.append((w, now))
            elif ready:
                ready -= 1
                push(now + startup, "refilled")
                begin(w, now, now)
            else:
                waiting.append((w, now))
        elif kind == "started":
            idx = next(i for i, (ww, _) in enumerate(waiting) if ww == w)
            _, asked = waiting[idx]
            del waiting[idx]
            begin(w, asked, now)
        else:  # a replacement is ready: give it to the longest-waiting worker
            if waiting:
                ww, asked = waiting.popleft()
                push(now + startup, "refilled")
                begin(ww, asked, now)
            else:
                ready += 1
    return RolloutStats(done, done / horizon, waited / done if done else 0.0)


class WatermarkPool:
    """The warm pool's refill decisions: how many to create or drain, and the target."""

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = min(low, high), high
        self.target = self.low
        self.idle = 0

    def action(self) -> tuple[str, int]:
        """``("fill", n)``, ``("drain", n)`` or ``("idle", 0)`` for the current idle count."""
        target = min(self.target, self.high)
        if self.idle < target:
            return "fill", target - self.idle
        if self.idle > self.high:
            return "drain", self.idle - self.high
        return "idle", 0

    def acquire(self) -> bool:
        """Take one idle resource (False on a miss); pressure below the low watermark
        doubles the target, up to the high watermark."""
        hit = self.idle > 0
        self.idle -= hit
        if self.idle < self.low and self.high > 0:
            self.target = min(max(self.target, self.low, 1) * 2, self.high)
        return hit

    def maintain(self) -> None:
        """One maintenance cycle, assumed to finish before the next acquisition."""
        kind, n = self.action()
        self.idle += n if kind == "fill" else -n if kind == "drain" else 0


def environments_per_host(
    host_memory: float,
    host_cores: int,
    env_memory: float,
    env_vcpus: int,
    memory_overcommit: float = 1.0,
    cpu_overcommit: float = 1.0,
) -> int:
    """How many environments fit on a host: the tighter of memory and CPU."""
    by_memory = math.floor(host_memory * memory_overcommit / env_memory)
    by_cpu = math.floor(host_cores * cpu_overcommit / env_vcpus)
    return min(by_memory, by_cpu)
