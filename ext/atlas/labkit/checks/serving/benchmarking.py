"""Checks of the labs of ``serving/benchmarking.md``: queueing closed forms the simulator and
the load generators are compared with, written from the queueing literature and sharing no
code with ``serving/simulator.py`` or ``serving/loadgen.py``.

- M/D/1 (Poisson arrivals, one server, a constant service time D): the Pollaczek-Khinchine
  mean wait rho D / (2 (1 - rho)) and Erlang's exact distribution of the wait,
  P(W <= t) = (1 - rho) sum_{k=0}^{floor(t/D)} [lambda (k D - t)]^k / k! e^{-lambda (k D - t)}.
- M/M/1 (exponential service): mean time in system 1 / (mu - lambda).
- The machine-repairman model (N users with exponential think time Z, one exponential
  server): the product-form queue-length distribution, throughput and response time.
"""

from __future__ import annotations

import decimal
import math
import random
import statistics
from collections.abc import Callable, Sequence
from decimal import Decimal
from fractions import Fraction

ROLE = "check"


def md1_mean_wait(rate: float, service: float) -> float:
    """Pollaczek-Khinchine for constant service: E[W] = rho D / (2 (1 - rho))."""
    rho = rate * service
    return rho * service / (2 * (1 - rho))


def md1_wait_cdf(t: float, rate: float, service: float) -> float:
    """Erlang's exact P(W <= t) for the M/D/1 queue (FIFO, stationary). The sum alternates in
    sign and its terms grow like e^(lambda t), so it is evaluated in 80-digit decimals."""
    if t < 0:
        return 0.0
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        lam, d, tt = Decimal(rate), Decimal(service), Decimal(t)
        total, fact = Decimal(0), Decimal(1)
        for k in range(math.floor(t / service) + 1):
            if k:
                fact *= k
            x = lam * (k * d - tt)
            total += (x**k if k else Decimal(1)) / fact * (-x).exp()
        value = (1 - lam * d) * total
    return min(1.0, max(0.0, float(value)))


def md1_wait_quantile(p: float, rate: float, service: float) -> float:
    """The p-quantile of the M/D/1 wait (0 when p <= 1 - rho: those requests do not wait)."""
    if p <= 1 - rate * service:
        return 0.0
    lo, hi = 0.0, service
    while md1_wait_cdf(hi, rate, service) < p:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if md1_wait_cdf(mid, rate, service) < p else (lo, mid)
    return hi


def md1_rate_for(p: float, wait: float, service: float) -> float:
    """The highest Poisson rate at which P(W <= wait) >= p in the M/D/1 queue (bisection)."""
    lo, hi = 0.0, 1 / service
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if md1_wait_cdf(wait, mid, service) >= p else (lo, mid)
    return lo


def mm1_mean_response(rate: float, mean_service: float) -> float:
    """M/M/1 mean time in system: 1 / (mu - lambda)."""
    return 1 / (1 / mean_service - rate)


def repairman(users: int, think: float, mean_service: float) -> tuple[float, float]:
    """Throughput X and mean response time R of N users (exponential think time of mean
    ``think``) and one FIFO exponential server: p_k proportional to N!/(N-k)! (S/Z)^k."""
    ratio = mean_service / think
    weights = [math.perm(users, k) * ratio**k for k in range(users + 1)]
    p0 = 1 / math.fsum(weights)
    x = (1 - p0) / mean_service
    return x, users / x - think


def replications(runs: Sequence[Sequence[float]]) -> tuple[float, float]:
    """Mean of a statistic over independent runs and its standard error: the method of
    independent replications, which keeps the tolerance honest for correlated samples (the
    waits inside one run are correlated; the means of runs with different seeds are not)."""
    means = [statistics.fmean(run) for run in runs]
    return statistics.fmean(means), statistics.stdev(means) / math.sqrt(len(means))


def within(value: float, reference: float, se: float, z: float = 4.0) -> bool:
    """|value - reference| <= z standard errors."""
    return abs(value - reference) <= z * se


def coverage(n: int, q: float, ranks: tuple[int, int], trials: int, seed: int = 0) -> float:
    """Share of ``trials`` samples of ``n`` exponential variates whose order statistics at
    ``ranks`` bracket the true ``q``-quantile, -ln(1 - q): Monte Carlo, no binomial."""
    rng = random.Random(seed)
    true = -math.log(1 - q)
    r, s = ranks
    hits = 0
    for _ in range(trials):
        xs = sorted(rng.expovariate(1.0) for _ in range(n))
        hits += xs[r - 1] <= true < xs[s - 1]
    return hits / trials


def memo(
    cost: Callable[[list[tuple[int, int]]], float],
) -> Callable[[list[tuple[int, int]]], float]:
    """The same step cost, remembered per step shape: a batch-1 run repeats a few shapes
    thousands of times, and the roofline arithmetic need not be redone each time."""
    table: dict[tuple[tuple[int, int], ...], float] = {}

    def cached(chunks: list[tuple[int, int]]) -> float:
        key = tuple(chunks)
        if key not in table:
            table[key] = cost(chunks)
        return table[key]

    return cached


def ci_ranks_exact(n: int, q: Fraction) -> tuple[int, int] | None:
    """The equal-tailed 95% order-statistic ranks for the ``q``-quantile, found by brute force
    in exact rational arithmetic (integer binomial coefficients, no logarithms): the largest r
    with P(C <= r - 1) <= 1/40 and the smallest s with P(C >= s) <= 1/40, C ~ Binomial(n, q)."""
    alpha = Fraction(1, 40)
    pmf = [math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(n + 1)]
    cum, cdf = Fraction(0), []
    for p in pmf:
        cum += p
        cdf.append(cum)
    rs = [r for r in range(1, n + 1) if cdf[r - 1] <= alpha]
    ss = [s for s in range(1, n + 1) if 1 - cdf[s - 1] <= alpha]
    return (max(rs), min(ss)) if rs and ss else None
