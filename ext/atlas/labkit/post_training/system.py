"""The rollout-train loop as a schedule: when each step ends and which weights made its data.

Taught on the page "The rollout-train system". :func:`simulate_loop` plays the two loops of
slime (``train.py``, synchronous, and ``train_async.py``, one step off-policy) on given phase
durations; :func:`expected_step_seconds` is the closed form the page derives for their mean
step time when response lengths are random; :func:`placement_gpus` is the GPU count of the
two placements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ROLE = "taught"


@dataclass(frozen=True)
class Step:
    """One training step: when it ended, the weight version that generated the data it trains
    on, and the version the trainer starts from (versions count updates; 0 is the initial
    model). Staleness is their difference."""

    index: int
    end: float
    data_version: int
    trainer_version: int

    @property
    def staleness(self) -> int:
        return self.trainer_version - self.data_version


def simulate_loop(rollout: list[float], train: float, sync: float, mode: str) -> list[Step]:
    """Run ``len(rollout)`` steps; ``rollout[i]`` is the generation time of batch ``i``.

    Both loops first push the initial weights (``sync``). ``"sync"``: generate batch ``i``
    with the current weights, train on it, push the new weights; nothing overlaps.
    ``"async"``: generation of batch ``i + 1`` starts as soon as batch ``i`` is collected,
    with the weights the engines hold then, and runs while the trainer trains on batch ``i``;
    the push waits for both, so batch ``i + 1`` was made by weights one update old."""
    steps: list[Step] = []
    t = sync  # the initial weight push
    if mode == "sync":
        for i, r in enumerate(rollout):
            t += r + train + sync
            steps.append(Step(i, t, data_version=i, trainer_version=i))
        return steps
    if mode != "async":
        raise ValueError(f"unknown mode {mode!r}")
    engine_version, made_by = 0, [0]
    collected = t + rollout[0]  # batch 0 was launched right after the initial push
    for i in range(len(rollout)):
        t = max(t, collected)  # batch i is in hand
        last = i + 1 == len(rollout)
        if not last:
            made_by.append(engine_version)  # batch i+1 starts now, with the engines' weights
            collected = t + rollout[i + 1]
        t = (t + train if last else max(t + train, collected)) + sync
        engine_version = i + 1
        steps.append(Step(i, t, data_version=made_by[i], trainer_version=i))
    return steps


def lognormal_cdf(x: float, median: float, sigma: float) -> float:
    """P(L <= x) for a log-normal length with the given median and log-space spread."""
    if x <= 0:
        return 0.0
    return 0.5 * (1 + math.erf(math.log(x / median) / (sigma * math.sqrt(2))))


def expected_max_length(n: int, median: float, sigma: float, cap: int, steps: int = 20000) -> float:
    """E[max of n response lengths], each log-normal and cut at ``cap`` tokens (the generation
    limit): ``integral from 0 to cap of (1 - F(x)^n) dx``, by the midpoint rule."""
    dx = cap / steps
    return sum((1 - lognormal_cdf((k + 0.5) * dx, median, sigma) ** n) * dx for k in range(steps))


def expected_step_seconds(
    n: int,
    median: float,
    sigma: float,
    cap: int,
    per_token: float,
    train: float,
    sync: float,
    mode: str,
) -> float:
    """Mean step time when a batch of ``n`` responses decodes together at ``per_token``
    seconds a step, so that its generation lasts ``R = per_token x`` the longest response.
    Synchronous: ``E[R] + train + sync``. One step off-policy:
    ``E[max(R, train)] + sync = train + integral from train of P(R > x) dx + sync``."""
    if mode == "sync":
        return per_token * expected_max_length(n, median, sigma, cap) + train + sync
    if mode != "async":
        raise ValueError(f"unknown mode {mode!r}")
    lo = min(train / per_token, cap)  # in tokens
    steps = 20000
    dx = (cap - lo) / steps
    tail = sum(
        (1 - lognormal_cdf(lo + (k + 0.5) * dx, median, sigma) ** n) * dx for k in range(steps)
    )
    return train + per_token * tail + sync


def placement_gpus(train_gpus: int, rollout_gpus: int, colocate: bool) -> int:
    """GPUs a job asks for: colocated, training and generation take turns on the same GPUs;
    disaggregated, each has its own."""
    return max(train_gpus, rollout_gpus) if colocate else train_gpus + rollout_gpus
