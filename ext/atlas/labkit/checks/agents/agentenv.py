"""Checks of the labs of ``agents/agentenv.md``.

The chapter's checks: Checks, scripted models, synthetic sessions and upstream readers for the
agents labs.
"""

from __future__ import annotations

ROLE = "check"


def burst_targets(low: int, high: int, rounds: int, burst: int | None = None) -> list[int]:
    """Refill targets of a warm pool after each of ``rounds`` bursts, by the doubling formula.

    Each round starts with the pool refilled to its target ``P``; a burst takes ``b``
    resources (``burst``, or all ``P`` when None). The ``j``-th acquisition leaves
    ``max(P - j, 0)`` idle and doubles the target when that is below ``low``, so a round
    doubles it ``d = max(0, b - max(0, P - low))`` times, capped at ``high``."""
    target, out = min(low, high), []
    for _ in range(rounds):
        p = target
        b = p if burst is None else burst
        d = max(0, b - max(0, p - low))
        target = min(high, max(target, low, 1) * 2**d)
        out.append(target)
    return out
