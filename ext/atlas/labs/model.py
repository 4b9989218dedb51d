"""What a lab is (parsed in Sphinx, torch-free) and what running it gave (plain, picklable data).

Why plain dataclasses of builtins: they cross three process boundaries (Sphinx's parallel
readers, the zygote's workers, the on-disk cache as JSON) and must never drag torch along.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Outcomes of one lab. "passed", "xfail" and "skipped" are fine; the others are reported.
PASSED, FAILED, XFAIL, XPASS = "passed", "failed", "xfail", "xpass"
TIMEOUT, CRASHED, SKIPPED, NOT_RUN = "timeout", "crashed", "skipped", "not run"
OK_STATUSES = frozenset({PASSED, XFAIL, SKIPPED})
# Outcomes worth caching: they are a property of the code, not of the machine's mood.
CACHEABLE = frozenset({PASSED, FAILED, XFAIL, XPASS, SKIPPED})


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

    def key_material(self) -> str:
        """What decides the lab's outcome (title and rendering options excluded)."""
        return repr((self.text, self.timeout, self.needs, self.expect_failure))


@dataclass
class ExampleResult:
    """How one example went: "passed", "failed" (output differs) or "error" (it raised)."""

    outcome: str
    got: str = ""
    seconds: float = 0.0


@dataclass
class LabResult:
    """The outcome of one lab and what the reader sees of it."""

    status: str
    seconds: float = 0.0
    examples: list[ExampleResult] = field(default_factory=list)
    failed_example: int | None = None  # index of the first failing/hung/crashing example
    message: str = ""  # why: the skip reason, the crash, the timeout

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES


@dataclass
class PageResult:
    """The outcome of all labs of a page, with the environment they ran in."""

    key: str
    environment: str  # "torch 2.13.0 · CPU"
    labs: list[LabResult]
    cached: bool = False  # served from the cache in this build

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("cached")
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PageResult:
        labs = [
            LabResult(
                status=lab["status"],
                seconds=lab["seconds"],
                examples=[ExampleResult(**example) for example in lab["examples"]],
                failed_example=lab["failed_example"],
                message=lab["message"],
            )
            for lab in data["labs"]
        ]
        return cls(key=data["key"], environment=data["environment"], labs=labs, cached=True)

    @property
    def cacheable(self) -> bool:
        return all(lab.status in CACHEABLE for lab in self.labs)
