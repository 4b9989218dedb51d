"""From a file's text to the lines a citation shows, each line keeping its upstream number.

Sphinx's ``literalinclude`` runs filters over bare lines and must re-derive numbers
(``:lineno-match:``), which is why it cannot number disjoint ranges. Here every filter maps
``list[Segment] -> list[Segment]``, a segment being a run of consecutive upstream lines with
its first line number, so numbering survives every step and gaps between ranges are explicit.
Each filter raises :class:`SelectError` naming what was found and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from atlas.upstream.spec import CitationSpec, line_ranges
from atlas.upstream.symbols.lookup import find_symbol
from atlas.upstream.symbols.model import SymbolError

OCCURRENCE = re.compile(r"^(?P<marker>.*?)\s+@(?P<n>\d+)$")
DEFAULT_MAX_LINES = 400

LANGUAGES = {
    "py": "python", "pyi": "python", "c": "c", "h": "cpp", "cc": "cpp", "cpp": "cpp",
    "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "hxx": "cpp", "inl": "cpp", "cuh": "cuda",
    "cu": "cuda", "sh": "bash", "bash": "bash", "md": "markdown", "rst": "rst", "yaml": "yaml",
    "yml": "yaml", "json": "json", "toml": "toml", "rs": "rust", "go": "go", "js": "javascript",
    "ts": "typescript", "java": "java", "proto": "protobuf", "cmake": "cmake", "ini": "ini",
    "cfg": "ini", "txt": "text", "jinja": "jinja", "lua": "lua", "mts": "typescript",
    "cts": "typescript", "tsx": "tsx",
}  # fmt: skip
NAMED = {"Makefile": "make", "CMakeLists.txt": "cmake", "Dockerfile": "docker"}


class SelectError(ValueError):
    """The selection cannot be made; the message says what was found and the fix."""


@dataclass(frozen=True)
class Segment:
    """Consecutive upstream lines starting at line ``start`` (1-based), without newlines."""

    start: int
    lines: tuple[str, ...]

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1


def language_for(path: str) -> str:
    """Pygments language name from the file name (``text`` when unknown)."""
    name = path.rsplit("/", 1)[-1]
    if name in NAMED:
        return NAMED[name]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return LANGUAGES.get(ext, "text")


def decode(data: bytes, path: str) -> str:
    """The file as text; SelectError for binary or non-UTF-8 files."""
    if b"\0" in data[:8192]:
        raise SelectError(f"{path} is a binary file; only text can be cited")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SelectError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return text.removeprefix("\ufeff")


def split_lines(text: str) -> list[str]:
    """Lines as GitHub numbers them (\\n, \\r\\n; a final newline ends the last line)."""
    return (
        text.replace("\r\n", "\n").split("\n")[:-1]
        if text.endswith("\n")
        else text.replace("\r\n", "\n").split("\n")
    )


def select(text: str, spec: CitationSpec, max_lines: int = DEFAULT_MAX_LINES) -> list[Segment]:
    """The selector step: line ranges, a symbol, or the whole file (with the size guard)."""
    lines = split_lines(text)
    n = len(lines)
    if spec.is_symbol:
        try:
            sym = find_symbol(text, spec.path, spec.symbol or "")
        except SymbolError as exc:
            raise SelectError(str(exc)) from None
        return [Segment(sym.start, tuple(lines[sym.start - 1 : sym.end]))]
    ranges = line_ranges(spec.selector)
    if ranges is None:
        if n > max_lines:
            raise SelectError(
                f"{spec.path} has {n} lines, more than the {max_lines} a whole-file citation "
                "may show; cite a range (PATH:10-40) or a symbol (PATH::name)"
            )
        if n == 0:
            raise SelectError(f"{spec.path} is empty")
        return [Segment(1, tuple(lines))]
    out = []
    for start, end in ranges:
        if end > n:
            raise SelectError(
                f"lines {start}-{end} run past the end of {spec.path}, which has {n} lines; "
                "check the range against the file at this commit"
            )
        out.append(Segment(start, tuple(lines[start - 1 : end])))
    return out


# -- option filters: (segments, value) -> segments -------------------------------------------
def _marker(value: str) -> tuple[str, int | None]:
    """``MARKER @N`` -> (MARKER, N); a bare marker -> (MARKER, None)."""
    match = OCCURRENCE.match(value)
    if match:
        return match.group("marker"), int(match.group("n"))
    return value, None


def _find(segments: list[Segment], marker: str, nth: int | None, option: str) -> tuple[int, int]:
    """(segment index, line index) of the line holding the nth occurrence of the marker. A
    marker on several lines must say which (``MARKER @2``): a silent first match would pick
    another line the day upstream adds one above."""
    if not marker:
        raise SelectError(f":{option}: needs the text of a line to look for")
    hits = [
        (si, li, seg.start + li)
        for si, seg in enumerate(segments)
        for li, line in enumerate(seg.lines)
        if marker in line
    ]
    lines = ", ".join(str(n) for _, _, n in hits)
    if nth is None and len(hits) > 1:
        raise SelectError(
            f":{option}: {marker!r} occurs on lines {lines} of the selection; say which with "
            f"'{marker} @N' (e.g. '{marker} @2') or use a longer marker"
        )
    n = nth or 1
    if n > len(hits):
        where = f"it occurs on lines {lines}" if hits else "it does not occur"
        raise SelectError(
            f":{option}: {marker!r} (occurrence {n}) not found in the selection: {where}"
        )
    si, li, _ = hits[n - 1]
    return si, li


def start_after(segments: list[Segment], value: str) -> list[Segment]:
    marker, nth = _marker(value)
    si, li = _find(segments, marker, nth, "start-after")
    rest = [Segment(segments[si].start + li + 1, segments[si].lines[li + 1 :])] + segments[si + 1 :]
    rest = [s for s in rest if s.lines]
    if not rest:
        raise SelectError(f":start-after: {marker!r} is on the last line; nothing is left to show")
    return rest


def end_before(segments: list[Segment], value: str) -> list[Segment]:
    marker, nth = _marker(value)
    si, li = _find(segments, marker, nth, "end-before")
    kept = segments[:si] + [Segment(segments[si].start, segments[si].lines[:li])]
    kept = [s for s in kept if s.lines]
    if not kept:
        raise SelectError(f":end-before: {marker!r} is on the first line; nothing is left to show")
    return kept


def dedent(segments: list[Segment], value: str) -> list[Segment]:
    """Remove N columns of leading whitespace (or the common indent when no N is given)."""
    lines = [line for seg in segments for line in seg.lines if line.strip()]
    if value.strip():
        try:
            n = int(value)
        except ValueError:
            raise SelectError(f":dedent: {value!r} is not a number of columns") from None
        bad = [line for line in lines if line[:n].strip()]
        if bad:
            raise SelectError(
                f":dedent: {n} would cut code from {bad[0].strip()[:40]!r}; use a smaller number"
            )
    else:
        n = min((len(line) - len(line.lstrip()) for line in lines), default=0)
    return [Segment(s.start, tuple(line[n:] for line in s.lines)) for s in segments]


class ContainsError(SelectError):
    """``:contains:`` not met: the text, and the lines that were looked at."""

    def __init__(self, value: str, segments: list[Segment]) -> None:
        self.value = value
        self.spans = [(seg.start, seg.end) for seg in segments]
        shown = f"lines {segments[0].start}-{segments[-1].end}"
        super().__init__(
            f":contains: {value!r} is not in the selection ({shown}); the range is probably "
            "wrong for this commit: re-read the file at the pin and fix the selector"
        )


def occurrences(text: str, value: str) -> list[int]:
    """The 1-based lines of ``text`` where ``value`` starts (every occurrence)."""
    found, start = [], text.find(value)
    while value and start >= 0:
        found.append(text.count("\n", 0, start) + 1)
        start = text.find(value, start + 1)
    return sorted(set(found))


def contains_hint(error: ContainsError, text: str, where: str, selector: str | None) -> str:
    """What a wrong ``:contains:`` means, with the one edit that fixes it: the lines of the
    file (at the commit cited) where the text really is, and the selector moved onto them."""
    lines = occurrences(text, error.value)
    first, last = error.spans[0][0], error.spans[-1][1]
    shown = f"lines {first}-{last}" if first != last else f"line {first}"
    head = f":contains: {error.value!r} is not in the selection ({shown})"
    if not lines:
        return (
            f"{head}, nor anywhere in {where}: the guard's text is wrong, or the code it "
            "guards is gone; re-read the file at this commit"
        )
    at = ", ".join(map(str, lines[:8])) + (", ..." if len(lines) > 8 else "")
    head += f"; in {where} it occurs at line{'s' if len(lines) > 1 else ''} {at}"
    if selector is None or selector.startswith("::"):
        return f"{head}: cite the code that holds it, or fix the guard's text"
    # the smallest move that brings an occurrence inside one of the ranges
    shift = min(
        (k - b if k > b else k - a for k in lines for a, b in error.spans),
        key=lambda move: (abs(move), move),
    )
    moved = ",".join(
        f"{a + shift}" if a == b else f"{a + shift}-{b + shift}" for a, b in error.spans
    )
    return f"{head}: cite :{moved} (every range moved by {shift:+d} lines)"


def contains(segments: list[Segment], value: str) -> list[Segment]:
    text = "\n".join(line for seg in segments for line in seg.lines)
    if value not in text:
        raise ContainsError(value, segments)
    return segments


FILTERS: list[tuple[str, Callable[[list[Segment], str], list[Segment]]]] = [
    ("start-after", start_after),
    ("end-before", end_before),
    ("dedent", dedent),
    ("contains", contains),
]


def check_options(options: dict[str, str]) -> None:
    """Refuse options nobody knows (check and lock read options straight from pages)."""
    unknown = sorted(set(options) - KNOWN_OPTIONS)
    if unknown:
        raise SelectError(
            f"unknown option(s) {', '.join(':' + u + ':' for u in unknown)}; known: "
            + ", ".join(f":{k}:" for k in sorted(KNOWN_OPTIONS))
        )


KNOWN_OPTIONS = {name for name, _ in FILTERS} | {
    "emphasize-lines", "language", "caption", "name", "class", "behind",
}  # fmt: skip


def apply_options(segments: list[Segment], options: dict[str, str]) -> list[Segment]:
    """Run the option filters in order over the selected segments."""
    selected = segments
    for name, func in FILTERS:
        if name in options and options[name] is not None:
            try:
                segments = func(segments, options[name])
            except SelectError:
                if name == "end-before" and options.get("start-after") is not None:
                    _refuse_wrong_order(selected, segments, options)
                raise
    return segments


def _refuse_wrong_order(
    selected: list[Segment], after_start: list[Segment], options: dict[str, str]
) -> None:
    """``:end-before:`` was not found after ``:start-after:``: when it occurs *above* the
    start, say the two are in the wrong order rather than that the marker does not occur."""
    marker, _ = _marker(options["end-before"])
    start_marker, _ = _marker(options["start-after"])
    if not marker or any(marker in line for seg in after_start for line in seg.lines):
        return  # found below the start (too few, or ambiguous): the filter's own error holds
    first_kept = after_start[0].start if after_start else None
    above = [
        seg.start + i
        for seg in selected
        for i, line in enumerate(seg.lines)
        if marker in line and (first_kept is None or seg.start + i < first_kept)
    ]
    if above:
        start_line = first_kept - 1 if first_kept is not None else "?"
        raise SelectError(
            f":end-before: {marker!r} (line {', '.join(map(str, above))}) comes before "
            f":start-after: {start_marker!r} (line {start_line}): the two are in the wrong "
            "order; the shown code starts after the start-after line and stops at the first "
            "end-before line below it, so swap the markers or pick a later end-before line"
        )


def parse_emphasis(value: str, segments: list[Segment]) -> list[int]:
    """Upstream line numbers of ``:emphasize-lines:`` (``12,15-17``), all inside the selection."""
    shown = {seg.start + i for seg in segments for i in range(len(seg.lines))}
    out: list[int] = []
    for part in value.replace(" ", "").split(","):
        if not part:
            continue
        if not re.fullmatch(r"\d+(-\d+)?", part):
            raise SelectError(f":emphasize-lines: {part!r} is not a line or range (write 12,15-17)")
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    outside = [n for n in out if n not in shown]
    if outside:
        spans = ", ".join(f"{s.start}-{s.end}" for s in segments)
        raise SelectError(
            f":emphasize-lines: {', '.join(map(str, outside))} not among the lines shown "
            f"({spans}); "
            "emphasize-lines uses the upstream line numbers"
        )
    return sorted(set(out))


def selected_text(segments: list[Segment]) -> str:
    """The text the lock hashes: the shown lines, segments joined by a blank marker line."""
    return "\n\u2026\n".join("\n".join(seg.lines) for seg in segments)


def line_count(data: bytes) -> int:
    """How many lines a file has, numbered as :func:`split_lines` numbers cited files (and as
    GitHub does), from its bytes, whatever their encoding; an empty file has none."""
    return len(split_lines(data.decode("utf-8", errors="replace"))) if data else 0
