"""Taught code: what the page explains."""

from __future__ import annotations

SCALE = 2


def double(x: int) -> int:
    """Twice x."""
    return SCALE * x


class Accumulator:
    """Adds things up."""

    def __init__(self) -> None:
        self.total = 0

    def add(self, x: int) -> int:
        self.total += double(x)
        return self.total
