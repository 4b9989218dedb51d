"""The 400 Gb/s figures of hpc/rdma.md: the arithmetic, and the parsers at the pins."""

from __future__ import annotations

import pytest
from atlas.labkit.checks.hpc import nic400
from atlas.labkit.pinned import UpstreamUnavailable


def test_line_rate_is_eight_bits_to_a_byte() -> None:
    assert nic400.line_rate_gbs(400) == 50.0
    assert nic400.line_rate_gbs(100) == 12.5


def test_per_card_share_and_fraction_of_line() -> None:
    share, fraction = nic400.per_card(190.0, 8, 400)
    assert share == pytest.approx(23.75) and fraction == pytest.approx(0.475)
    share, fraction = nic400.per_card(800.0, 16, 400)
    assert share == 50.0 and fraction == 1.0


def test_parsers_read_the_figures_at_the_pins() -> None:
    try:
        dep = nic400.deepep_normal_internode()
        roce = nic400.mooncake_roce()
        efa = nic400.mooncake_efa()
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    assert set(dep["rows"]) == {16, 32, 64} and dep["gbps"] == 400
    assert (roce["cards"], roce["gbps"]) == (8, 400)
    assert (efa["cards"], efa["gbps"]) == (16, 400)
    assert efa["write_gbs"] <= efa["stated_line_gbs"]
