"""Rewrite citations in the book's pages in place, touching nothing but the citation text.

Used by ``bump``: each edit names a page, the line of a citation, its text as written and its
new text, and optionally how upstream line numbers moved (to carry ``:emphasize-lines:``, which
counts in upstream numbering). All citations of one line are replaced in a single pass, so a new
spec can never be mistaken for another old one; pages are written atomically.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

# A citation token: the spec as written, between backticks (roles) or after the directive name.
TOKEN = r"(?<=[`\s])(?:{alternatives})(?=[`\s]|$)"
EMPHASIZE = re.compile(r"^(?P<head>\s*:?emphasize-lines:?\s*)(?P<value>[\d,\s-]+?)(?P<tail>\s*)$")
OPTION_LINE = re.compile(r"^:?[\w-]+:")


class PageEditError(RuntimeError):
    """A page no longer holds the citation an edit was planned for."""


@dataclass(frozen=True)
class CitationEdit:
    """Replace citation ``old`` on ``line`` of ``page`` by ``new``; ``linemap`` maps old
    upstream line numbers to new ones (empty: the numbering did not move)."""

    page: str
    line: int
    kind: str
    old: str
    new: str
    linemap: dict[int, int] = field(default_factory=dict)


def rewrite_line(line: str, replacements: dict[str, str]) -> str:
    """The line with each citation token replaced by its new text, all in one pass."""
    if not replacements:
        return line
    alternatives = "|".join(re.escape(raw) for raw in sorted(replacements, key=len, reverse=True))
    pattern = re.compile(TOKEN.format(alternatives=alternatives))
    found: set[str] = set()

    def swap(match: re.Match[str]) -> str:
        found.add(match.group(0))
        return replacements[match.group(0)]

    out = pattern.sub(swap, line)
    lost = set(replacements) - found
    if lost:
        raise PageEditError(
            f"citation {sorted(lost)[0]!r} is no longer on this line: {line.strip()!r}"
        )
    return out


def remap_emphasis(value: str, linemap: dict[int, int]) -> str | None:
    """An ``:emphasize-lines:`` value carried through a line map (None if a line is lost)."""
    parts = []
    for part in value.replace(" ", "").split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        lo, hi = linemap.get(int(a)), linemap.get(int(b or a))
        if lo is None or hi is None:
            return None
        parts.append(str(lo) if lo == hi else f"{lo}-{hi}")
    return ",".join(parts)


def rewrite_emphasis(lines: list[str], fence: int, linemap: dict[int, int]) -> None:
    """Carry the ``:emphasize-lines:`` option of the directive opened at ``lines[fence]``."""
    j = fence + 1
    while j < len(lines):
        stripped = lines[j].strip()
        if not (stripped == "---" or (stripped and OPTION_LINE.match(stripped))):
            return  # past the options
        match = EMPHASIZE.match(lines[j].rstrip("\r\n"))
        if match:
            value = remap_emphasis(match["value"], linemap)
            if value is not None:
                ending = lines[j][len(lines[j].rstrip("\r\n")) :]
                lines[j] = f"{match['head']}{value}{match['tail']}{ending}"
            return
        j += 1


def write_atomic(path: Path, text: str) -> None:
    """Replace a file's content at once (a crash leaves the old page or the new one)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def rewrite_pages(book_root: Path, edits: Iterable[CitationEdit]) -> list[str]:
    """Apply the edits to their pages; returns the pages that changed."""
    by_page: dict[str, list[CitationEdit]] = {}
    for edit in edits:
        if edit.new != edit.old or edit.linemap:
            by_page.setdefault(edit.page, []).append(edit)
    touched = []
    for page, page_edits in sorted(by_page.items()):
        path = Path(book_root) / page
        with path.open(encoding="utf-8", newline="") as fh:  # keep \r\n as written
            text = fh.read()
        lines = text.splitlines(keepends=True)  # numbered as the scanner numbers them
        per_line: dict[int, dict[str, str]] = {}
        for edit in page_edits:
            if not 1 <= edit.line <= len(lines):
                raise PageEditError(f"{page} has no line {edit.line} any more")
            if edit.new != edit.old:
                per_line.setdefault(edit.line, {})[edit.old] = edit.new
        for number, replacements in per_line.items():
            lines[number - 1] = rewrite_line(lines[number - 1], replacements)
        for edit in page_edits:
            if edit.kind == "directive" and edit.linemap:
                rewrite_emphasis(lines, edit.line - 1, edit.linemap)
        new_text = "".join(lines)
        if new_text != text:
            write_atomic(path, new_text)
            touched.append(page)
    return touched
