"""What a mutation is: one exact text in one labkit file replaced by another."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutation:
    """A realistic bug planted in taught code.

    ``pages`` are where its author expects a check to catch it; they run first, but the tool
    runs every page whose labs reach ``path`` (benchmarks/mutations.py), so a page left out
    here cannot hide a catch or a miss.
    """

    name: str
    chapter: str
    path: str  # relative to ext/atlas/labkit
    old: str
    new: str
    pages: tuple[str, ...]
    bug: str
