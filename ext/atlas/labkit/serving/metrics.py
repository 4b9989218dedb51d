"""What a serving benchmark reports, computed from per-request times.

Percentiles of per-request times (TTFT, TPOT, end-to-end latency) as ``numpy.percentile``
computes them (linear interpolation between order statistics, the estimator vLLM's and
SGLang's benchmark scripts call); SLO attainment and the highest rate that keeps it; and how
many requests a percentile needs before its estimate can be trusted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

ROLE = "taught"


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation between order statistics:
    rank ``(n - 1) q / 100`` in the sorted values, as ``numpy.percentile`` by default."""
    xs = sorted(values)
    rank = (len(xs) - 1) * q / 100
    lo = math.floor(rank)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (rank - lo)


def attainment(
    ttft: Sequence[float], tpots: Sequence[float], ttft_slo: float, tpot_slo: float
) -> float:
    """Share of requests that met both objectives."""
    ok = sum(1 for a, b in zip(ttft, tpots, strict=True) if a <= ttft_slo and b <= tpot_slo)
    return ok / len(ttft)


def highest_rate(
    attained: Callable[[float], float], target: float, low: float, high: float, tol: float = 1e-3
) -> float:
    """The highest arrival rate at which ``attained(rate)`` stays at or above ``target``
    (DistServe's goodput), by bisection between a rate that meets it and one that does not;
    assumes attainment falls as the rate rises."""
    if attained(low) < target or attained(high) >= target:
        raise ValueError(f"the target {target} is not crossed between {low} and {high}")
    while high - low > tol:
        mid = (low + high) / 2
        low, high = (mid, high) if attained(mid) >= target else (low, mid)
    return low


def binom_cdf(n: int, p: float) -> list[float]:
    """P(X <= k) for k = 0..n, X ~ Binomial(n, p), from the log-pmf (no overflow at large n)."""
    logs = [
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
        for k in range(n + 1)
    ]
    cdf, total = [], 0.0
    for lp in logs:
        total += math.exp(lp)
        cdf.append(min(total, 1.0))
    return cdf


def quantile_ci_ranks(n: int, q: float, confidence: float = 0.95) -> tuple[int, int] | None:
    """1-based ranks (r, s) of the order statistics that bracket the true ``q``-quantile
    (0 < q < 1) with at least ``confidence``, for ``n`` independent samples of any continuous
    distribution. The count C of samples below the quantile is Binomial(n, q), and
    X_(r) <= x_q < X_(s) exactly when r <= C <= s - 1; each tail gets (1 - confidence) / 2.
    None when n is too small for such ranks to exist."""
    alpha = (1 - confidence) / 2
    cdf = binom_cdf(n, q)
    below = [k for k in range(n) if cdf[k] <= alpha]  # P(C <= r - 1) <= alpha for r = k + 1
    above = [k for k in range(n + 1) if 1 - cdf[k] <= alpha]  # P(C >= s) <= alpha, s = k + 1
    if not below or not above or above[0] + 1 > n:
        return None
    return below[-1] + 1, above[0] + 1
