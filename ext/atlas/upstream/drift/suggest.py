"""A new selector for a citation whose text changed: proposed, never applied, for ``review``.

:func:`.carry.carry` says *that* a citation changed; this module says *where the cited code
probably is now*, so that a human accepts a line instead of hunting for it:

- a symbol that is still there is carried by name (its text changed: the suggestion is the
  same selector at the new pin);
- a line range is looked for in the new file by similarity: windows of the new file that share
  the cited range's distinctive lines are aligned with the old text (:mod:`difflib`, the
  standard library's sequence matcher, which is what the old-to-new comparison needs and adds
  no dependency), and the best-scoring window is proposed;
- when the file is gone, or the best window in it is poor, the other files of the new tree
  that :mod:`.plan` offers (git's rename and copy targets first, then files of the same kind)
  are searched the same way.

A suggestion is offered only if it passes the citation's own guard (``:contains:``,
``:start-after:``, ``:end-before:``, ``:emphasize-lines:`` carried through the alignment):
the caller passes that check in as ``accepts``. An empty or inverted range is never built.
Pure functions on strings, like :mod:`.carry`.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from atlas.code.select import split_lines
from atlas.code.spec import line_ranges

MIN_SCORE = 0.5  # below this similarity a window is not the cited code, whatever the guard says
GOOD_SCORE = 0.8  # at or above this in the cited file, other files are not searched
CANDIDATES = 6  # windows per file scored with the sequence matcher (the rest: only counted)
MIN_LINE = 4  # shorter stripped lines (braces, `else:`) are too common to anchor a window


@dataclass(frozen=True)
class Candidate:
    """A file of the new tree where the cited code may be: its path and text."""

    path: str
    text: str


@dataclass(frozen=True)
class Suggestion:
    """Where the cited code probably is at the new pin: ``path`` and ``selector`` to cite,
    how similar its text is to the old (0..1), why it was chosen, and the old-to-new line map
    of the lines that align (for ``:emphasize-lines:``)."""

    path: str
    selector: str | None
    score: float
    note: str
    linemap: dict[int, int] = field(default_factory=dict)


# (file at the new pin, selector, linemap) -> whether the citation's own guard passes there
Accepts = Callable[[Candidate, str | None, dict[int, int]], bool]


def _key(line: str) -> str:
    return " ".join(line.split())


def _anchored(line: str) -> bool:
    key = _key(line)
    return len(key) >= MIN_LINE and any(c.isalnum() for c in key)


def similarity(a: list[str], b: list[str]) -> float:
    """How alike two runs of lines are (difflib's ratio on whitespace-normalised lines)."""
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, [_key(x) for x in a], [_key(x) for x in b], False).ratio()


def _starts(cited: list[str], lines: list[str]) -> list[int]:
    """Window starts (0-based) worth scoring: those whose window holds most cited lines."""
    wanted = {_key(c) for c in cited if _anchored(c)}
    if not wanted or not lines:
        return []
    hit = [1 if _key(line) in wanted else 0 for line in lines]
    width = len(cited)
    sums = [0] * (len(lines) + 1)
    for i, h in enumerate(hit):
        sums[i + 1] = sums[i] + h
    scored = []
    for s in range(max(1, len(lines) - width + 1)):
        count = sums[min(len(lines), s + width)] - sums[s]
        if count:
            scored.append((-count, s))
    scored.sort()
    chosen: list[int] = []
    for _, s in scored:
        if all(abs(s - c) > width // 2 for c in chosen):
            chosen.append(s)
        if len(chosen) == CANDIDATES:
            break
    return chosen


def align(cited: list[str], lines: list[str], start: int) -> tuple[int, int, dict[int, int]]:
    """The window of ``lines`` (1-based, inclusive) that the cited lines align with, around a
    0-based ``start``, and the map cited index -> new line number of the lines that match."""
    width = len(cited)
    lo = max(0, start - width // 2)
    region = lines[lo : start + width + width // 2]
    matcher = difflib.SequenceMatcher(
        None, [_key(c) for c in cited], [_key(r) for r in region], False
    )
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    if not blocks:
        return start + 1, min(len(lines), start + width), {}
    first, last = blocks[0], blocks[-1]
    begin = lo + first.b - first.a  # the unmatched head of the citation stays in the window
    end = lo + last.b + last.size + (width - last.a - last.size)
    begin, end = max(0, begin), min(len(lines), end)
    mapping = {b.a + k: lo + b.b + k + 1 for b in blocks for k in range(b.size)}
    return begin + 1, end, mapping


def best_window(cited: list[str], text: str) -> tuple[int, int, float, dict[int, int]] | None:
    """The window of ``text`` most like ``cited``: (first, last, score, index map), or None
    when no window shares a distinctive line with it."""
    lines = split_lines(text)
    best: tuple[int, int, float, dict[int, int]] | None = None
    for start in _starts(cited, lines):
        first, last, mapping = align(cited, lines, start)
        if last < first:
            continue
        score = similarity(cited, lines[first - 1 : last])
        if best is None or score > best[2]:
            best = (first, last, score, mapping)
    return best


def _range_text(ranges: list[tuple[int, int]]) -> str:
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges)


def suggest_ranges(
    selector: str,
    old_text: str,
    new_path: str | None,
    new_text: str | None,
    others: Callable[[], Iterable[Candidate]],
    accepts: Accepts,
) -> Suggestion | None:
    """A line-range citation carried by similarity: each range looked for on its own, in the
    cited file first, then (when that is gone or poor) in the other files ``others`` yields.
    Every range of the citation must land in one file, ascending and disjoint."""
    ranges = line_ranges(selector) or []
    old_lines = split_lines(old_text)
    if not ranges or any(b > len(old_lines) or a > b for a, b in ranges):
        return None
    pieces = [old_lines[a - 1 : b] for a, b in ranges]

    def in_file(path: str, text: str) -> Suggestion | None:
        found, linemap, scores = [], {}, []
        for (a, _b), cited in zip(ranges, pieces, strict=True):
            window = best_window(cited, text)
            if window is None or window[2] < MIN_SCORE:
                return None
            first, last, score, mapping = window
            found.append((first, last))
            scores.append(score)
            linemap.update({a + i: n for i, n in mapping.items()})
        if any(b < a for a, b in found) or any(
            found[i][1] >= found[i + 1][0] for i in range(len(found) - 1)
        ):
            return None  # never an empty, inverted, overlapping or unordered range
        new_selector = _range_text(found)
        if not accepts(Candidate(path, text), new_selector, linemap):
            return None
        score = min(scores)
        return Suggestion(path, new_selector, score, f"{score:.0%} similar", linemap)

    best = in_file(new_path, new_text) if new_path and new_text is not None else None
    if best is not None and best.score >= GOOD_SCORE:
        return best
    for other in others():
        if other.path == new_path:
            continue
        found = in_file(other.path, other.text)
        if found is not None and (best is None or found.score > best.score):
            best = Suggestion(
                found.path, found.selector, found.score, f"{found.note}, in another file",
                found.linemap,
            )  # fmt: skip
            if found.score >= GOOD_SCORE:
                break
    return best


def suggest_symbol(
    selector: str,
    old: Candidate,
    new: Candidate | None,
    others: Callable[[], Iterable[Candidate]],
    accepts: Accepts,
) -> Suggestion | None:
    """A symbol that is still there, by name: in the (possibly renamed) file, else in another
    file of the new tree that defines it. Marked changed: its text differs, or :mod:`.carry`
    would have carried it."""
    from atlas.upstream.drift.carry import symbol_lines  # carry imports this module

    symbol = selector[2:]
    before = symbol_lines(old.path, old.text, symbol)
    was = split_lines(old.text)[before[0] - 1 : before[1]] if before else []
    for place in itertools.chain([new] if new else [], others()):
        where = symbol_lines(place.path, place.text, symbol)
        if where is None or not accepts(place, selector, {}):
            continue
        score = similarity(was, split_lines(place.text)[where[0] - 1 : where[1]])
        note = f"the symbol by name, {score:.0%} similar"
        if new is None or place.path != new.path:
            note += ", in another file"
        return Suggestion(place.path, selector, score, note)
    return None


def suggest(
    selector: str | None,
    old_path: str,
    old_text: str | None,
    new_path: str | None,
    new_text: str | None,
    others: Callable[[], Iterable[Candidate]],
    accepts: Accepts,
) -> Suggestion | None:
    """The suggestion for a citation left behind (see the module's docstring), or None."""
    if selector is None or old_text is None:
        return None  # a whole file that changed has nothing narrower to propose
    if selector.startswith("::"):
        new = Candidate(new_path, new_text) if new_path and new_text is not None else None
        return suggest_symbol(selector, Candidate(old_path, old_text), new, others, accepts)
    return suggest_ranges(selector, old_text, new_path, new_text, others, accepts)
