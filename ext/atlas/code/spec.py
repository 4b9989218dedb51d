"""The citation grammar ``NAME[@REV] PATH[:SELECTOR]``, parsed and normalised.

Selectors: ``10``, ``10-40``, ``10-40,55-60`` (ascending, disjoint), ``::name``,
``::Class.method`` (a symbol; C++ scopes may be written ``::ns::Class::method``), or nothing
(the whole file). Parsing refuses anything that could reach git as an option or leave the
repository, so later stages can trust a CitationSpec.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from atlas.git.revs import MIN_SHA_DIGITS, UnsafePath, check_rev, is_sha_prefix
from atlas.git.store import check_path

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
RANGES = re.compile(r"^\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*$")
SYMBOL = re.compile(r"^[A-Za-z_~][\w~]*(?:(?:\.|::)[A-Za-z_~][\w~]*)*(?:\(\))?$")


class SpecError(ValueError):
    """A citation that does not parse; the message says what is wrong and the fix."""


@dataclass(frozen=True)
class CitationSpec:
    """A parsed citation. ``rev`` None means the upstream's pin."""

    name: str
    rev: str | None
    path: str
    selector: str | None

    def with_rev(self, rev: str) -> CitationSpec:
        return replace(self, rev=rev)

    @property
    def is_symbol(self) -> bool:
        return bool(self.selector and self.selector.startswith("::"))

    @property
    def symbol(self) -> str | None:
        """``Class.method`` for ``::Class.method`` (C++ ``::`` separators kept as written)."""
        return self.selector[2:] if self.selector and self.is_symbol else None

    def __str__(self) -> str:
        head = self.name + (f"@{self.rev}" if self.rev else "")
        if self.selector is None:
            return f"{head} {self.path}"
        sep = "" if self.selector.startswith("::") else ":"
        return f"{head} {self.path}{sep}{self.selector}"


def _normalise_ranges(text: str) -> str:
    ranges = []
    for part in text.split(","):
        start_s, _, end_s = part.partition("-")
        start, end = int(start_s), int(end_s or start_s)
        if start < 1:
            raise SpecError(f"line numbers start at 1, got {part!r}; upstream lines are 1-based")
        if end < start:
            raise SpecError(f"range {part!r} ends before it starts; write {end}-{start}")
        if ranges and start <= ranges[-1][1]:
            prev = ranges[-1]
            raise SpecError(
                f"range {part!r} overlaps or precedes {prev[0]}-{prev[1]}; "
                "list ranges in ascending order without overlap"
            )
        ranges.append((start, end))
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def _split_selector(rest: str) -> tuple[str, str | None]:
    """PATH and SELECTOR of ``PATH[:SELECTOR]``: ``::`` starts a symbol, a last ``:`` lines."""
    if "::" in rest:
        # both PATH::name and PATH:::name (PATH, ':', then the selector ::name) are accepted
        sep = ":::" if ":::" in rest else "::"
        path, _, symbol = rest.partition(sep)
        if not SYMBOL.match(symbol):
            raise SpecError(
                f"symbol selector '::{symbol}' is not a name; write ::function, ::Class.method "
                "or ::ns::Class::method"
            )
        return path, "::" + symbol.removesuffix("()")
    path, colon, tail = rest.rpartition(":")
    if not colon:
        return rest, None
    tail = tail.replace(" ", "")
    if RANGES.match(tail):
        return path, _normalise_ranges(tail)
    raise SpecError(
        f"selector ':{tail}' is not understood; write :10, :10-40, :10-40,55-60, ::name or "
        "nothing for the whole file"
    )


def parse_spec(text: str) -> CitationSpec:
    """Parse ``NAME[@REV] PATH[:SELECTOR]``; SpecError says what is wrong and the fix."""
    raw = text.strip()
    if not raw:
        raise SpecError(
            "empty citation; write NAME[@REV] PATH[:SELECTOR], "
            "e.g. megatron@e03878b5 megatron/core/foo.py:10-40"
        )
    head, _, rest = raw.partition(" ")
    rest = rest.strip()
    if not rest:
        raise SpecError(f"citation {raw!r} has no path; write NAME[@REV] PATH[:SELECTOR]")
    if any(ch.isspace() for ch in rest):
        raise SpecError(
            f"citation {raw!r} has more than two parts; paths with spaces are not supported"
        )
    name, at, rev = head.partition("@")
    if not NAME.match(name):
        raise SpecError(
            f"upstream name {name!r} is not valid; use the submodule name (e.g. megatron)"
        )
    if at:
        if not rev:
            raise SpecError(
                f"{head!r} has '@' but no revision; give a commit SHA or a tag, or drop '@'"
            )
        try:
            check_rev(rev)
        except UnsafePath as exc:
            raise SpecError(str(exc)) from None
        if is_sha_prefix(rev, 1, MIN_SHA_DIGITS - 1, any_case=True):
            raise SpecError(
                f"revision {rev!r} is too short; give at least 7 hex digits of the commit"
            )
        if is_sha_prefix(rev, any_case=True):
            rev = rev.lower()
    path, selector = _split_selector(rest)
    try:
        path = check_path(path)
    except UnsafePath as exc:
        raise SpecError(str(exc)) from None
    return CitationSpec(name=name, rev=rev if at else None, path=path, selector=selector)


def line_ranges(selector: str | None) -> list[tuple[int, int]] | None:
    """The inclusive 1-based ranges of a line selector; None for a symbol or the whole file."""
    if selector is None or selector.startswith("::"):
        return None
    if not RANGES.match(selector):
        raise SpecError(f"selector {selector!r} is not a line selector")
    out = []
    for part in selector.split(","):
        start, _, end = part.partition("-")
        out.append((int(start), int(end or start)))
    return out
