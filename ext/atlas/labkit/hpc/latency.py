"""What one message costs on an RDMA link: the alpha-beta line and its half-bandwidth point.

A latency benchmark such as perftest's ``ib_send_lat`` sends one message at a time and waits
for it, so its time for ``n`` bytes is a fixed cost plus a cost per byte,
``t(n) = alpha + n / bandwidth``: ``alpha`` for posting, the card's processing, the PCIe
reads and the wire's propagation; ``n / bandwidth`` for serialising the bytes. The bandwidth
such a message achieves, ``n / t(n)``, reaches half the link's at ``n = alpha * bandwidth``,
the *half-bandwidth point*: below it the fixed cost dominates, above it the bytes do.
"""

from __future__ import annotations

ROLE = "taught"


def fit_alpha_beta(sizes: list[float], times: list[float]) -> tuple[float, float]:
    """The least-squares line ``t = alpha + n / bandwidth`` through ``(size, time)`` points.

    Returns ``(alpha, bandwidth)`` in the units of the inputs (for bytes and microseconds,
    bandwidth comes out in bytes per microsecond, i.e. MB/s).
    """
    k = len(sizes)
    mean_n, mean_t = sum(sizes) / k, sum(times) / k
    sxx = sum((n - mean_n) ** 2 for n in sizes)
    sxy = sum((n - mean_n) * (t - mean_t) for n, t in zip(sizes, times, strict=True))
    slope = sxy / sxx  # time per byte
    return mean_t - slope * mean_n, 1.0 / slope


def effective_bandwidth(n: float, alpha: float, bandwidth: float) -> float:
    """The bandwidth a single message of ``n`` bytes achieves: ``n / (alpha + n / bandwidth)``."""
    return n / (alpha + n / bandwidth)


def half_bandwidth_size(alpha: float, bandwidth: float) -> float:
    """The size at which one message reaches half of ``bandwidth``: ``alpha * bandwidth``."""
    return alpha * bandwidth
