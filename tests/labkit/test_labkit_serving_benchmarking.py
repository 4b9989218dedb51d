"""Edge cases of the benchmarking page's load generators and metrics that its labs do not
assert (serving/loadgen.py, serving/metrics.py)."""

from __future__ import annotations

import random
import statistics

import pytest
from atlas.labkit.serving.loadgen import capped_open_loop, closed_loop, fifo
from atlas.labkit.serving.metrics import highest_rate, percentile, quantile_ci_ranks


def test_percentile_matches_the_standard_library_on_ragged_samples() -> None:
    rng = random.Random(3)
    for n in (2, 3, 7, 101):
        xs = [rng.expovariate(1.0) for _ in range(n)]
        cuts = statistics.quantiles(xs, n=100, method="inclusive")
        assert all(abs(percentile(xs, k) - cuts[k - 1]) < 1e-12 for k in range(1, 100))
    assert percentile([5.0], 99) == 5.0


def test_a_cap_at_least_the_number_of_requests_changes_nothing() -> None:
    sent = [0.0, 0.1, 0.1, 0.5, 2.0]
    service = [0.3, 0.2, 0.4, 0.1, 0.1]
    out = capped_open_loop(sent, service, max_concurrency=len(sent))
    assert [(c.start, c.finish) for c in out] == fifo(sent, service)
    assert all(c.sent == c.intended for c in out)


def test_a_cap_of_one_sends_each_request_when_the_previous_one_ends() -> None:
    out = capped_open_loop([0.0, 0.0, 0.0], [1.0, 1.0, 1.0], max_concurrency=1)
    assert [c.sent for c in out] == [0.0, 1.0, 2.0]
    assert [c.measured for c in out] == [1.0, 1.0, 1.0]
    assert [c.latency for c in out] == [1.0, 2.0, 3.0]


def test_one_user_without_think_time_keeps_the_server_busy() -> None:
    got = closed_loop(1, lambda rng: 0.0, lambda rng: 0.5, 4)
    assert [s.start for s in got] == [0.0, 0.5, 1.0, 1.5]


def test_highest_rate_refuses_a_bracket_that_does_not_cross() -> None:
    with pytest.raises(ValueError):
        highest_rate(lambda rate: 1.0, 0.9, 1.0, 2.0)


def test_quantile_ci_ranks_need_enough_samples() -> None:
    assert quantile_ci_ranks(5, 0.5) is None
    assert quantile_ci_ranks(20, 0.5) == (6, 15)
