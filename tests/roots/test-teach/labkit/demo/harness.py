"""Checks that the page need not show."""

from atlas.labkit.demo.kernel import double

ROLE = "check"


def double_matches_sum(x: int) -> bool:
    return double(x) == x + x
