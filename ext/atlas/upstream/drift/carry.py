"""One citation carried from its file at the old pin to the file at the new pin: a pure function.

:func:`carry` takes the cited file's text at both commits and the citation's selector, and
returns a :class:`Verdict`:

- ``unchanged``: the cited text is where it was, under the same path and selector;
- ``moved``: the same text, found under new line numbers or a new path (a rename);
- ``changed``: the cited text differs; ``detail`` is the diff a human has to read;
- ``gone``: the file or the symbol is not there, or the range runs past the old file.

A line range is renumbered through the diff's hunks; a symbol is looked up again by name with
the directive's own resolver, so a bump finds exactly what the build will show. Nothing here
reads git or Sphinx: :mod:`.plan` reads the two blobs and passes git's own diff in.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from atlas.code.select import split_lines
from atlas.code.spec import line_ranges
from atlas.code.symbols.lookup import find_symbol
from atlas.upstream.drift.model import DriftStatus
from atlas.upstream.linemap import Hunk, line_hunks, map_range, nearest_range

MAX_DIFF_LINES = 60

# The hunks between two line lists; None when they cannot be compared line by line (git says
# binary), which makes every cited range "changed".
LineDiff = Callable[[list[str], list[str]], list[Hunk] | None]


@dataclass(frozen=True)
class FileAt:
    """The cited file at one commit: its path, the commit as messages name it (a short SHA),
    and its text (None: the file is not there)."""

    path: str
    rev: str
    text: str | None


@dataclass(frozen=True)
class Verdict:
    """What became of one citation.

    Carried (``unchanged``, ``moved``): ``path`` and ``selector`` cite the same text at the new
    commit, and ``linemap`` maps each cited old line number to its new one (to carry
    ``:emphasize-lines:``). Left behind (``changed``, ``gone``): ``detail`` says why.
    """

    status: DriftStatus
    detail: str = ""
    path: str | None = None
    selector: str | None = None
    linemap: dict[int, int] = field(default_factory=dict)

    @property
    def carried(self) -> bool:
        return self.status.carried


def as_text(data: bytes) -> str:
    """A blob as text; undecodable bytes are kept (surrogateescape), so equal bytes give equal
    text and the line numbers match GitHub's."""
    return data.decode("utf-8", "surrogateescape")


def symbol_lines(path: str, text: str, symbol: str) -> tuple[int, int] | None:
    """The 1-based inclusive lines of a symbol in a file, or None when it is not there (or
    not there once). The directive's own resolver is used, so a bump finds exactly what the
    build will show."""
    try:
        found = find_symbol(text, path, symbol)
    except LookupError:
        return None
    return found.start, found.end


def diff_excerpt(
    old_text: list[str],
    new_text: list[str],
    old_label: str,
    new_label: str,
    old_start: int,
    new_start: int,
) -> str:
    """A unified diff of two line lists numbered as in their files, cut to a readable size."""
    lines = list(difflib.unified_diff(old_text, new_text, old_label, new_label, n=2, lineterm=""))
    out = []
    for line in lines:
        match = re.match(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", line)
        if match:
            a, b = int(match.group(1)) + old_start - 1, int(match.group(3)) + new_start - 1
            line = f"@@ -{a}{match.group(2) or ''} +{b}{match.group(4) or ''} @@"
        out.append(line)
    if len(out) > MAX_DIFF_LINES:
        out = out[:MAX_DIFF_LINES] + [f"... ({len(lines) - MAX_DIFF_LINES} more diff lines)"]
    return "\n".join(out)


def carry(
    selector: str | None, old: FileAt, new: FileAt, line_diff: LineDiff = line_hunks
) -> Verdict:
    """What becomes of the citation ``old.path[:selector]`` when its file becomes ``new``.

    ``selector`` is as written in the page (None: the whole file; ``::name``: a symbol;
    otherwise line ranges). ``line_diff`` is asked for hunks only when a cited range's file
    changed; the default compares lines with difflib, ``plan`` passes git's diff of the blobs.
    """
    if old.text is None:
        return Verdict(DriftStatus.GONE, f"{old.path} does not exist at the old pin {old.rev}")
    if new.text is None:
        return Verdict(DriftStatus.GONE, f"{old.path} was deleted between {old.rev} and {new.rev}")
    old_lines, new_lines = split_lines(old.text), split_lines(new.text)
    where = f"{new.path}@{new.rev}"

    def carried(new_selector: str | None, linemap: dict[int, int], detail: str = "") -> Verdict:
        same = new.path == old.path and new_selector == selector
        status = DriftStatus.UNCHANGED if same and not detail else DriftStatus.MOVED
        return Verdict(status, detail, new.path, new_selector, linemap)

    if selector is not None and selector.startswith("::"):
        symbol = selector[2:]
        before = symbol_lines(old.path, old.text, symbol)
        if before is None:
            return Verdict(DriftStatus.GONE, f"{selector} is not in {old.path} at the old pin")
        after = symbol_lines(new.path, new.text, symbol)
        if after is None:
            return Verdict(DriftStatus.GONE, f"{selector} is no longer in {where}")
        a = old_lines[before[0] - 1 : before[1]]
        b = new_lines[after[0] - 1 : after[1]]
        if a != b:
            diff = diff_excerpt(a, b, f"{old.path}@{old.rev}", where, before[0], after[0])
            return Verdict(DriftStatus.CHANGED, diff)
        shift = after[0] - before[0]
        linemap = {n: n + shift for n in range(before[0], before[1] + 1)}
        # under the same path, a symbol that moved says where; a renamed file says enough
        detail = (
            f"lines {before[0]}-{before[1]} -> {after[0]}-{after[1]}"
            if shift and new.path == old.path
            else ""
        )
        return carried(selector, linemap, detail)

    ranges = line_ranges(selector)
    if ranges is None:  # the whole file
        if old.text != new.text:
            diff = diff_excerpt(old_lines, new_lines, f"{old.path}@{old.rev}", where, 1, 1)
            return Verdict(DriftStatus.CHANGED, diff)
        return carried(None, {})
    past = [r for r in ranges if r[1] > len(old_lines)]
    if past:
        return Verdict(
            DriftStatus.GONE,
            f"{old.path} has {len(old_lines)} lines at the old pin; the range "
            f"{past[0][0]}-{past[0][1]} does not resolve there",
        )
    hunks = [] if old.text == new.text else line_diff(old_lines, new_lines)
    new_ranges: list[tuple[int, int]] = []
    linemap: dict[int, int] = {}
    diffs: list[str] = []
    for start, end in ranges:
        mapped = map_range(hunks, start, end) if hunks is not None else None
        if (
            mapped is not None
            and old_lines[start - 1 : end] == new_lines[mapped[0] - 1 : mapped[1]]
        ):
            new_ranges.append(mapped)
            linemap.update({n: n + mapped[0] - start for n in range(start, end + 1)})
            continue
        lo, hi = nearest_range(hunks or [], start, end, len(new_lines))
        diffs.append(
            diff_excerpt(
                old_lines[start - 1 : end],
                new_lines[lo - 1 : hi],
                f"{old.path}:{start}-{end}@{old.rev}",
                f"{new.path}:{lo}-{hi}@{new.rev}",
                start,
                lo,
            )
        )
    if diffs:
        return Verdict(DriftStatus.CHANGED, "\n".join(diffs))
    return carried(",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in new_ranges), linemap)
