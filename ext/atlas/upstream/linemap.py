"""Carry line numbers from one version of a file to the next through git's diff hunks.

A cited range survives a pin move when no hunk touches it: every hunk above it shifts it by
the lines it adds minus the lines it removes; a hunk that overlaps it (or inserts between two
of its lines) means the cited text changed, and a human has to look.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


@dataclass(frozen=True)
class Hunk:
    """One ``-U0`` hunk: old lines ``old_start..old_start+old_len-1`` became the new ones.

    With ``old_len == 0`` the new lines were inserted *after* old line ``old_start``.
    """

    old_start: int
    old_len: int
    new_start: int
    new_len: int

    @property
    def delta(self) -> int:
        return self.new_len - self.old_len


def parse_hunks(diff: bytes) -> list[Hunk]:
    """The hunks of a unified diff made with ``-U0`` (headers only are read)."""
    hunks = []
    for m in _HUNK.finditer(diff):
        old_len = 1 if m.group(2) is None else int(m.group(2))
        new_len = 1 if m.group(4) is None else int(m.group(4))
        hunks.append(Hunk(int(m.group(1)), old_len, int(m.group(3)), new_len))
    return hunks


def line_hunks(old: list[str], new: list[str]) -> list[Hunk]:
    """The ``-U0`` hunks between two line lists, numbered as git numbers them.

    For texts that have no git objects behind them (a wheel's files, a unit test's strings);
    difflib may place an ambiguous edit elsewhere than git would, but a range is only carried
    when its text is found unchanged at the mapped place, so either placement is safe.
    """
    hunks = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old_len, new_len = i2 - i1, j2 - j1
        hunks.append(Hunk(i1 + 1 if old_len else i1, old_len, j1 + 1 if new_len else j1, new_len))
    return hunks


def _touches(hunk: Hunk, start: int, end: int) -> bool:
    """Whether the hunk changes a line of ``start..end`` or inserts between two of them."""
    if hunk.old_len == 0:
        return start <= hunk.old_start < end
    return hunk.old_start <= end and hunk.old_start + hunk.old_len - 1 >= start


def _before(hunk: Hunk, line: int) -> bool:
    """Whether the hunk lies wholly above old line ``line``."""
    if hunk.old_len == 0:
        return hunk.old_start < line
    return hunk.old_start + hunk.old_len - 1 < line


def map_line(hunks: list[Hunk], line: int) -> int | None:
    """The new number of an unchanged old line; None when a hunk removed or replaced it."""
    shift = 0
    for hunk in hunks:
        if hunk.old_len and hunk.old_start <= line <= hunk.old_start + hunk.old_len - 1:
            return None
        if _before(hunk, line):
            shift += hunk.delta
    return line + shift


def map_range(hunks: list[Hunk], start: int, end: int) -> tuple[int, int] | None:
    """The new ``(start, end)`` of an old range no hunk touches; None when its text changed."""
    if any(_touches(h, start, end) for h in hunks):
        return None
    shift = sum(h.delta for h in hunks if _before(h, start))
    return start + shift, end + shift


def nearest_range(hunks: list[Hunk], start: int, end: int, new_total: int) -> tuple[int, int]:
    """Where an old range's text went (to show a human the diff): unchanged ends map exactly,
    an end inside a hunk goes to that hunk's edge on the new side."""

    def inside(line: int) -> Hunk | None:
        for h in hunks:
            if h.old_len and h.old_start <= line <= h.old_start + h.old_len - 1:
                return h
        return None

    h = inside(start)
    new_start = (h.new_start if h.new_len else h.new_start + 1) if h else map_line(hunks, start)
    h = inside(end)
    new_end = (
        (h.new_start + h.new_len - 1 if h.new_len else h.new_start) if h else map_line(hunks, end)
    )
    assert new_start is not None and new_end is not None
    new_start = max(1, min(new_start, new_total + 1))
    return new_start, max(new_start - 1, min(new_end, new_total))
