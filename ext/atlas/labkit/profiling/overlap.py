"""How much of a step's communication a timeline shows hidden behind compute.

A timeline (Nsight Systems, or PyTorch's profiler with CUDA activity) gives each kernel a start
and an end on its stream. Communication is hidden where an NCCL kernel (``ncclDevKernel_*``)
runs while a compute kernel runs on another stream, and *exposed* where it runs alone: only the
exposed part lengthens the step. The sum of the NCCL kernels' durations says nothing about it;
the intersection of the two sets of intervals does.
"""

from __future__ import annotations

from collections.abc import Iterable

ROLE = "taught"

Interval = tuple[float, float]


def union(intervals: Iterable[Interval]) -> list[Interval]:
    """The intervals merged into disjoint ones, in order: the time at least one of them runs."""
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def covered(intervals: Iterable[Interval]) -> float:
    """The length of the union: how long at least one interval runs."""
    return sum(e - s for s, e in union(intervals))


def exposed(comm: Iterable[Interval], compute: Iterable[Interval]) -> float:
    """The time communication runs while no compute kernel does: the union of ``comm`` minus
    its intersection with the union of ``compute``, by one sweep over both sorted lists."""
    a, b = union(comm), union(compute)
    hidden, j = 0.0, 0
    for start, end in a:
        while j < len(b) and b[j][1] <= start:
            j += 1
        k = j
        while k < len(b) and b[k][0] < end:
            hidden += min(end, b[k][1]) - max(start, b[k][0])
            k += 1
    return sum(e - s for s, e in a) - hidden


def overlap_fraction(comm: Iterable[Interval], compute: Iterable[Interval]) -> float:
    """The share of the communication's time that compute hides (1: all, 0: serialised)."""
    comm = list(comm)
    total = covered(comm)
    return 1.0 - exposed(comm, compute) / total if total else 1.0
