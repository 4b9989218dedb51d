"""Taught code that uses a helper."""

from atlas.labkit.demo.helper import OFFSET


def bump(x: int) -> int:
    return x + OFFSET
