"""Checking code that several pages of the hpc chapter share: no page (the tests).

The chapter's checks: Checkers and instruments for the HPC chapter's labs (not taught on the
pages).
"""

from __future__ import annotations

from typing import Any

ROLE = "check"


# -- multi-rank checks ------------------------------------------------------------------------
def in_order(rank: int, world: int, calls: list[tuple[Any, ...]]) -> list[Any]:
    """Run several rank functions one after another in one process group (one start-up)."""
    return [fn(rank, world, *args) for fn, *args in calls]
