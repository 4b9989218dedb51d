"""Failures at scale: how often a checkpoint should be taken, and what stragglers cost.

A synchronous job on ``N`` accelerators stops when any one of them fails. With independent
failures the job's mean time between failures is the component's divided by ``N``. Work done
since the last checkpoint is lost at each failure; writing checkpoints costs time too. Young
(1974) and Daly (2006) give the interval between checkpoints that balances the two.

:func:`simulate_run` is the independent check: it plays a job forward through a random
failure trace, with no formula inside.
"""

from __future__ import annotations

import math
import random

ROLE = "taught"


def job_mtbf(component_mtbf: float, n: int) -> float:
    """Mean time between failures of a job that needs all ``n`` components at once."""
    return component_mtbf / n


def young_interval(checkpoint_cost: float, mtbf: float) -> float:
    """Young's first-order optimum: compute ``sqrt(2 delta M)`` between checkpoints."""
    return math.sqrt(2 * checkpoint_cost * mtbf)


def daly_interval(checkpoint_cost: float, mtbf: float) -> float:
    """Daly's higher-order optimum (compute time between checkpoints), valid for
    ``delta < 2M``; beyond that, checkpoint every ``M``."""
    d, m = checkpoint_cost, mtbf
    if d >= 2 * m:
        return m
    x = d / (2 * m)
    return math.sqrt(2 * d * m) * (1 + math.sqrt(x) / 3 + x / 9) - d


def waste_fraction(interval: float, checkpoint_cost: float, mtbf: float, restart: float) -> float:
    """First-order share of wall time not spent on useful work: the checkpoints
    (``delta / tau``), the half interval lost on average at each failure, and the restart."""
    return checkpoint_cost / interval + (interval + checkpoint_cost) / (2 * mtbf) + restart / mtbf


def failure_trace(mtbf: float, horizon: float, seed: int) -> list[float]:
    """Failure times of a Poisson process with mean gap ``mtbf``, up to ``horizon``."""
    rng = random.Random(seed)
    times, t = [], 0.0
    while t < horizon:
        t += rng.expovariate(1 / mtbf)
        times.append(t)
    return times


def simulate_run(
    work: float, interval: float, checkpoint_cost: float, restart: float, failures: list[float]
) -> float:
    """Wall time to finish ``work`` seconds of computation, checkpointing after every
    ``interval`` of it, when the machine fails at the times in ``failures``.

    A failure anywhere (computing, checkpointing, restarting) throws away everything since
    the last completed checkpoint; the job then pays ``restart`` and resumes from there.
    """
    t, saved = 0.0, 0.0
    events = iter(failures)
    next_failure = next(events, math.inf)
    while saved < work:
        segment = min(interval, work - saved)
        cost = segment + (checkpoint_cost if saved + segment < work else 0.0)
        if t + cost <= next_failure:
            t += cost
            saved += segment
            continue
        t = next_failure + restart  # lost: the partial segment; paid: the restart
        next_failure = next(events, math.inf)
        while next_failure < t:  # failed again while restarting
            t = next_failure + restart
            next_failure = next(events, math.inf)
    return t


def straggler_step_time(base: float, slowdown: float, p_slow: float, n: int) -> float:
    """Expected time of a synchronous step over ``n`` workers when each is, independently,
    ``slowdown`` times slower with probability ``p_slow``: the step waits for the slowest,
    so it is slow unless all ``n`` are fast."""
    p_any = 1 - (1 - p_slow) ** n
    return base * (1 + (slowdown - 1) * p_any)


def simulate_steps(
    base: float, slowdown: float, p_slow: float, n: int, steps: int, seed: int
) -> float:
    """Mean step time measured over ``steps`` random synchronous steps (the slowest worker
    sets each step)."""
    rng = random.Random(seed)
    total = 0.0
    for _ in range(steps):
        total += max(base * (slowdown if rng.random() < p_slow else 1.0) for _ in range(n))
    return total / steps
