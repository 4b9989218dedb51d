"""Telling a bad step from a bad GPU: the spike test, rerun attribution, the straggler report.

- :class:`SpikeDetector`: a value is *unexpectedly large* when it is at least ``threshold``
  times the largest absolute value of the first ``num_samples`` observations (Megatron-LM's
  ``RerunStateMachine.is_unexpectedly_large``). NaN and Inf are left to their own checks.
- :func:`attribute`: when a step's result is rejected (NaN, Inf, a spike), run the same step
  again on the same GPU; if the result changes, the fault was *transient*. If it repeats, run
  the step once more on another GPU (through a checkpoint): a different result there means the
  first GPU computes it wrongly every time (*persistent*); the same result means the GPUs are
  fine and the data or the model produced it (*correct result*). The states follow Megatron's
  rerun state machine.
- :func:`straggler_report`: each rank's throughput from its step time, and the ranks that fall
  well below the median.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

ROLE = "taught"

TRANSIENT, PERSISTENT, CORRECT = "transient_error", "persistent_error", "correct_result"


class SpikeDetector:
    """Flags values at least ``threshold`` times the running maximum of the first samples."""

    def __init__(self, threshold: float = 10.0, num_samples: int = 100) -> None:
        self.threshold, self.num_samples = threshold, num_samples
        self.count, self.max_value = 0, 0.0

    def __call__(self, value: float) -> bool:
        value = math.fabs(value)
        if math.isnan(value) or math.isinf(value):
            return False  # checked separately
        if self.count < self.num_samples:
            self.count += 1
            self.max_value = max(self.max_value, value)
            return False  # still learning what "normal" is
        return value >= self.max_value * self.threshold


def attribute(
    step: Callable[[int], float],
    rejected: Callable[[float], bool],
    gpu: int,
    other_gpu: int,
    tolerance: float = 0.0,
) -> dict[str, Any]:
    """Run ``step(gpu)``; if ``rejected``, find out whether the GPU or the step is to blame.

    ``step(device)`` reruns the same iteration from the same state (same batch, same random
    state) on ``device`` and returns the checked value, e.g. the loss. Returns the diagnosis
    (None if nothing was rejected) and the states visited.
    """

    def differs(a: float, b: float) -> bool:
        if math.isnan(a) and math.isnan(b):
            return False
        if math.isnan(a) or math.isnan(b):
            return True
        return abs(a - b) > tolerance * max(abs(a), abs(b), 1e-30)

    states = ["INITIAL_RUN"]
    first = step(gpu)
    if not rejected(first):
        return {"diagnosis": None, "states": states, "values": [first]}
    states.append("RERUNNING_IN_PLACE")  # same GPU, same inputs
    again = step(gpu)
    if differs(first, again):
        return {"diagnosis": TRANSIENT, "states": states, "values": [first, again]}
    states += ["WILL_RERUN_FROM_CHECKPOINT", "RERUNNING_FROM_CHECKPOINT"]  # save, restart elsewhere
    elsewhere = step(other_gpu)
    diagnosis = PERSISTENT if differs(first, elsewhere) else CORRECT
    return {"diagnosis": diagnosis, "states": states, "values": [first, again, elsewhere]}


def straggler_report(
    step_ms: list[float], flops_per_step: float, slow_factor: float = 0.9
) -> dict[str, Any]:
    """Per-rank TFLOP/s and the ranks below ``slow_factor`` of the median.

    Every rank of a synchronous job waits for the slowest, so the step time each rank measures
    around its *own* work (not the collective that waits) is what separates a straggler from
    its peers. ``flops_per_step`` is the whole job's model FLOPs for one step.
    """
    world = len(step_ms)
    tflops = [flops_per_step / world / (ms / 1e3) / 1e12 for ms in step_ms]
    median = statistics.median(tflops)
    slow = [r for r, t in enumerate(tflops) if t < slow_factor * median]
    lo = min(range(world), key=tflops.__getitem__)
    hi = max(range(world), key=tflops.__getitem__)
    return {"tflops": tflops, "min": (tflops[lo], lo), "max": (tflops[hi], hi), "slow_ranks": slow}
