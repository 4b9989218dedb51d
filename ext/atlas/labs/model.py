"""What a lab is (parsed in Sphinx, torch-free) and what running it gave (plain, picklable data).

Why plain dataclasses of builtins and ``str`` enums: they cross three process boundaries
(Sphinx's parallel readers, the zygote's workers, the on-disk cache as JSON) and must never drag
torch along. Results cross the last two as JSON-able dicts, encoded by ``to_json`` and decoded
by ``from_json`` here, once; :func:`result_of` is the one way from a lab to its result.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

_SURROGATES = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, the replacement character.

    Why: a lab that prints undecodable bytes (``bytes.decode(errors="surrogateescape")``, a
    file name from ``os.listdir``) gives a ``str`` that no UTF-8 writer accepts; the page, the
    log and the warnings file would each fail on it, and a failure there crashes Sphinx, which
    deletes its environment. The reader sees where the bad bytes were.
    """
    return _SURROGATES.sub("\ufffd", text)


class LabStatus(StrEnum):
    """The outcome of one lab.

    A ``str`` enum: each member *is* its text, so the cache's JSON, the JUnit report, the CSS
    classes and the messages keep the words they always had ("not run" included).
    """

    PASSED = "passed"
    FAILED = "failed"
    XFAIL = "xfail"  # failed, as ``:expect-failure:`` said it would
    XPASS = "xpass"  # passed despite ``:expect-failure:``: reported
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    SKIPPED = "skipped"
    NOT_RUN = "not run"

    @property
    def ok(self) -> bool:
        """Fine: passed, failed as expected, or skipped; the others are reported."""
        return self in _OK

    @property
    def cacheable(self) -> bool:
        """A property of the code, not of the machine's mood (timeouts and crashes are not)."""
        return self in _CACHEABLE


_OK = frozenset({LabStatus.PASSED, LabStatus.XFAIL, LabStatus.SKIPPED})
_CACHEABLE = _OK | {LabStatus.FAILED, LabStatus.XPASS}


class ExampleOutcome(StrEnum):
    """How one ``>>>`` example went: its output matched, differed, or it raised."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"


@dataclass(frozen=True)
class ExampleSpec:
    """One ``>>>`` example: its source, expected output and 1-based line in the page."""

    source: str
    want: str
    line: int


@dataclass(frozen=True)
class LabSpec:
    """One ``lab`` directive as written in the page."""

    docname: str
    index: int  # position among the page's labs
    anchor: str  # HTML id of the rendered lab
    title: str
    text: str  # the directive's content, as doctest parses it
    line: int  # 1-based line of the first content line
    start_line: int  # 1-based line of the directive itself
    examples: tuple[ExampleSpec, ...]
    timeout: float
    needs: str = ""  # "" or "cuda"
    expect_failure: bool = False
    hide_output: bool = False
    kind: str = "check"  # "check" or "model" (atlas.labs.kinds); it does not change the run
    source: str = ""  # the included file the lab is written in, when it is not the page itself

    def key_material(self) -> str:
        """What decides the lab's outcome (title and rendering options excluded)."""
        return repr((self.text, self.timeout, self.needs, self.expect_failure))


@dataclass
class ExampleResult:
    """How one example went, and what it printed when that was not what the page expects."""

    outcome: ExampleOutcome
    got: str = ""
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self.outcome = ExampleOutcome(self.outcome)
        self.got = printable(self.got)

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "got": self.got, "seconds": self.seconds}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExampleResult:
        return cls(ExampleOutcome(data["outcome"]), data["got"], data["seconds"])


@dataclass
class LabResult:
    """The outcome of one lab and what the reader sees of it."""

    status: LabStatus
    seconds: float = 0.0
    examples: list[ExampleResult] = field(default_factory=list)
    failed_example: int | None = None  # index of the first failing/hung/crashing example
    message: str = ""  # why: the skip reason, the crash, the timeout

    def __post_init__(self) -> None:
        self.status = LabStatus(self.status)  # an unknown status is a ValueError here
        self.message = printable(self.message)

    @property
    def ok(self) -> bool:
        return self.status.ok

    def to_json(self) -> dict[str, Any]:
        """Builtins only: what the worker sends to Sphinx and what the cache stores."""
        return {
            "status": self.status.value,
            "seconds": self.seconds,
            "examples": [example.to_json() for example in self.examples],
            "failed_example": self.failed_example,
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LabResult:
        """The one decoder of a lab's result, for the worker's events and the cache alike."""
        return cls(
            status=LabStatus(data["status"]),
            seconds=data["seconds"],
            examples=[ExampleResult.from_json(example) for example in data["examples"]],
            failed_example=data["failed_example"],
            message=data["message"],
        )


@dataclass
class PageResult:
    """The outcome of all labs of a page, with the environment they ran in."""

    key: str
    environment: str  # "torch 2.13.0 · CPU"
    labs: list[LabResult]
    cached: bool = False  # served from the cache in this build

    def to_json(self) -> dict[str, Any]:
        """The cache entry (``cached`` is a property of this build, not of the result)."""
        labs = [lab.to_json() for lab in self.labs]
        return {"key": self.key, "environment": self.environment, "labs": labs}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PageResult:
        """A cache entry; raises ``KeyError``, ``TypeError`` or ``ValueError`` on a bad one."""
        labs = [LabResult.from_json(lab) for lab in data["labs"]]
        return cls(key=data["key"], environment=data["environment"], labs=labs, cached=True)

    @property
    def cacheable(self) -> bool:
        return all(lab.status.cacheable for lab in self.labs)


def result_of(results: Mapping[str, PageResult], spec: LabSpec) -> LabResult | None:
    """The result of lab ``spec``, looked up on its own page (``None``: it has none yet).

    By the lab's own page, never the page being written: the LaTeX builder resolves one doctree
    that holds every page of the book.
    """
    page = results.get(spec.docname)
    if page is None or spec.index >= len(page.labs):
        return None
    return page.labs[spec.index]


def environment_of(results: Mapping[str, PageResult], docname: str) -> str:
    """The environment line (``torch 2.13.0 · CPU``) the labs of ``docname`` ran in, or ""."""
    page = results.get(docname)
    return page.environment if page else ""
