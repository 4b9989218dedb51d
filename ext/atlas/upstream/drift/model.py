"""What ``drift`` reports and ``bump`` applies: one record per citation, and the plan holding them.

Shared by git and package upstreams (:mod:`.plan`, :mod:`.package_plan`), which carry citations
the same way; :mod:`.report` prints these as a table or as JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path

from atlas.upstream.citations import CitationSite
from atlas.upstream.packages.registry import PackageUpstream
from atlas.upstream.registry import Upstream

SHORT = 10  # hex digits of the old pin written into citations left behind


class DriftStatus(StrEnum):
    """What became of one citation; the text is what the table, the JSON records and the
    messages print (a ``StrEnum`` formats, compares and serialises as its text)."""

    UNCHANGED = "unchanged"  # the cited text is where it was, under the same path and selector
    MOVED = "moved"  # the same text under new line numbers or a new path (a rename)
    CHANGED = "changed"  # the cited text differs: left on the old pin for a human to read
    GONE = "gone"  # the file or the symbol is not there: left on the old pin

    @property
    def carried(self) -> bool:
        """Whether the citation moves to the new pin (its text is the same there)."""
        return self in (DriftStatus.UNCHANGED, DriftStatus.MOVED)


STATUSES = tuple(DriftStatus)  # the order of the summary line


class DriftError(RuntimeError):
    """The command cannot run (unknown upstream, unknown revision); one line for the user."""


@dataclass
class Record:
    """One citation of the upstream: where it is, what it says now and after the move."""

    page: str
    line: int
    kind: str
    old: str
    new: str
    status: DriftStatus
    detail: str = ""
    new_path: str | None = field(default=None, repr=False)
    new_blob: str | None = field(default=None, repr=False)
    linemap: dict[int, int] = field(default_factory=dict, repr=False)
    # a citation left behind: where its code probably is at the new pin (drift.suggest),
    # written as the citation to put in the page, with why, and the line map it implies
    suggestion: str | None = None
    suggestion_note: str = ""
    suggestion_linemap: dict[int, int] = field(default_factory=dict, repr=False)

    @property
    def carried(self) -> bool:
        """Whether the citation moves to the new pin (else it is left reading the old one)."""
        return self.status.carried

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        for private in ("new_path", "new_blob", "linemap", "suggestion_linemap"):
            out.pop(private)
        out["status"] = str(self.status)
        if self.suggestion is None:  # only a citation left behind may have one
            out.pop("suggestion")
            out.pop("suggestion_note")
        return out


@dataclass
class Plan:
    """Everything a bump would do; ``drift`` prints it, ``bump`` applies it."""

    upstream: Upstream | PackageUpstream  # a git upstream, or a package (package_plan)
    old: str
    new: str
    records: list[Record]
    kept: list[CitationSite]  # citations with an explicit @REV other than the old pin
    git_dir: Path | None = None  # the object store both commits were read from

    def counts(self) -> dict[DriftStatus, int]:
        return {s: sum(r.status == s for r in self.records) for s in STATUSES}
