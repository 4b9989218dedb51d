"""Harness: checks that the page need not show."""

from atlas.labkit.demo.kernel import double


def double_matches_sum(x: int) -> bool:
    return double(x) == x + x
