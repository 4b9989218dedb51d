"""A record of the collectives an algorithm issues, to compare traffic with the formulas.

Why a log rather than a profiler: the pages state traffic in elements per step (for example,
ZeRO-3 moves 1.5 times what DDP moves); counting the payload each collective is called with
checks that statement exactly and independently of the transport.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

ROLE = "taught"


@dataclass
class CommLog:
    """Elements passed to each kind of collective, summed over calls on this rank."""

    elements: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)

    def add(self, op: str, numel: int) -> None:
        self.elements[op] += int(numel)
        self.calls[op] += 1

    def as_dict(self) -> dict[str, int]:
        return dict(sorted(self.elements.items()))
