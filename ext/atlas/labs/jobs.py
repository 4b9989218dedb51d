"""A page's run as the runner sees it: the job it sends, what the events said of its worker,
and the page's result made from them (the lab to blame when the worker or the zygote died).

Plain data and pure functions, apart from the clock: :mod:`atlas.labs.runner` owns the
processes and the event loop.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from atlas.labs import protocol
from atlas.labs.model import (
    ExampleOutcome,
    ExampleResult,
    LabResult,
    LabSpec,
    LabStatus,
    PageResult,
)


@dataclass
class Job:
    """One page's labs, to run in one worker."""

    docname: str
    key: str
    specs: list[LabSpec]
    memory_limit_mb: int = 0
    seed: int = 0
    book_root: str = ""  # the tree a lab must not write to (snapshot where Landlock is absent)

    def payload(self, scratch: str = "") -> dict[str, Any]:
        return {
            "docname": self.docname,
            "memory_limit_mb": self.memory_limit_mb,
            "scratch": scratch,
            "book_root": self.book_root,
            "labs": [
                {
                    "text": spec.text,
                    "needs": spec.needs,
                    "expect_failure": spec.expect_failure,
                    "seed": self.seed,
                    "filename": f"{spec.docname} (lab {spec.index + 1}, line {spec.line})",
                }
                for spec in self.specs
            ],
        }


@dataclass
class Running:
    """What the runner knows of a job in flight, from its worker's events and the zygote."""

    job: Job
    fd: int
    started: float
    deadline: float
    reader: protocol.Reader = field(default_factory=protocol.Reader)
    pid: int = 0
    environment: str = ""
    lab: int = -1
    example: int = -1
    lab_started: float = 0.0
    results: dict[int, LabResult] = field(default_factory=dict)
    done: bool = False
    eof: bool = False
    eof_at: float = 0.0
    exit: str = ""
    timed_out: bool = False
    error: str = ""
    scratch: str = ""
    ending_since: float = 0.0  # when it first had an end (done, eof, exit, timeout, death)
    server_died: str = ""  # how the zygote ended while this page ran
    alongside: int = 0  # other pages running when the zygote died

    def ending(self, now: float) -> None:
        self.ending_since = self.ending_since or now


def page_result(state: Running) -> PageResult:
    specs = state.job.specs
    labs: list[LabResult] = []
    for index, spec in enumerate(specs):
        if state.server_died and index == max(state.lab, 0):
            labs.append(_blamed(state, spec))
        elif index in state.results:
            labs.append(state.results[index])
        elif index == max(state.lab, 0) and not state.done:
            labs.append(_interrupted(state, spec))
        else:
            reason = "an earlier lab of this page ended its session"
            labs.append(LabResult(LabStatus.NOT_RUN, message=f"not run: {reason}"))
    return PageResult(key=state.job.key, environment=state.environment, labs=labs)


def _where(state: Running, spec: LabSpec) -> tuple[int | None, str]:
    example = state.example if state.example >= 0 else None
    if example is None:
        return None, "before its first example"
    ex = spec.examples[example]
    first = ex.source.splitlines()[0] if ex.source else ""
    return example, f"in example {example + 1} (line {ex.line}: >>> {first})"


def _blamed(state: Running, spec: LabSpec) -> LabResult:
    """The lab that was running when the zygote died: it killed it, most likely."""
    example, where = _where(state, spec)
    if state.done or state.lab in state.results:
        where = "by its last example"
    seconds = round(time.monotonic() - (state.lab_started or state.started), 4)
    message = (
        f"the lab server (the zygote that forks each page's worker) died ({state.server_died}) "
        f"while this lab ran, {where}: a lab must not kill the processes that run it. The "
        "server was restarted for the pages after it"
    )
    if state.alongside:
        message += f" ({state.alongside} other page(s) running then are reported too)"
    return LabResult(LabStatus.CRASHED, seconds, [], example, message)


def _interrupted(state: Running, spec: LabSpec) -> LabResult:
    """The lab that was running when the worker was killed or died."""
    example, where = _where(state, spec)
    seconds = round(time.monotonic() - (state.lab_started or state.started), 4)
    done = [ExampleResult(ExampleOutcome.PASSED) for _ in range(example or 0)]
    if state.timed_out:
        message = f"timed out after {spec.timeout:g} s {where}; its session was killed"
        return LabResult(LabStatus.TIMEOUT, seconds, done, example, message)
    how = state.exit or "no exit status reported"
    message = f"the worker crashed ({how}) {where}"
    if state.error:
        message += f"\n{state.error}"
    return LabResult(LabStatus.CRASHED, seconds, done, example, message)
