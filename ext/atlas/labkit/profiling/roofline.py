"""Placing a measured kernel on a roofline chart, as Nsight Compute's roofline section does.

A kernel that performs ``F`` FLOPs, moves ``B`` bytes to and from DRAM and runs for ``t``
seconds sits at intensity ``I = F / B`` and achieved throughput ``F / t``. The roof at ``I`` is
``min(peak, I * bandwidth)``; the fraction of the roof reached says how much faster the kernel
could run on this chip without changing its algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLE = "taught"


@dataclass(frozen=True)
class Placement:
    intensity: float  # FLOPs per byte
    ridge: float  # the intensity where the two roofs meet
    roof: float  # attainable FLOP/s at this intensity
    bound: str  # "memory" or "compute"
    achieved: float | None  # FLOP/s, if a time was measured
    of_roof: float | None  # achieved / roof


def place(
    flops: float, bytes_moved: float, peak: float, bandwidth: float, seconds: float | None = None
) -> Placement:
    intensity = flops / bytes_moved
    ridge = peak / bandwidth
    roof = min(peak, intensity * bandwidth)
    bound = "memory" if intensity < ridge else "compute"
    achieved = flops / seconds if seconds else None
    return Placement(
        intensity, ridge, roof, bound, achieved, achieved / roof if achieved is not None else None
    )


def linear_cost(tokens: int, d_in: int, d_out: int, elem_bytes: int) -> tuple[float, float]:
    """FLOPs and compulsory bytes of ``y = x @ W.T``: read x and W, write y."""
    flops = 2.0 * tokens * d_in * d_out
    nbytes = float(elem_bytes * (tokens * d_in + d_in * d_out + tokens * d_out))
    return flops, nbytes
