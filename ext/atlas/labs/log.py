"""What the build log says about the labs: a progress line per page, the slowest labs, and one
error (or ``lab.skipped`` warning) per lab that is not fine, at the page and line to blame.

The text of a problem (:func:`problem_text`, :func:`problem_line`) is shared with the JUnit
report (:mod:`atlas.labs.junit`), so that CI annotations and the log say the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sphinx.util import logging

from atlas.labs.model import LabResult, LabSpec, LabStatus, PageResult, result_of
from atlas.labs.render import STATUS_WORDS

if TYPE_CHECKING:
    from atlas.labs.runner import Job

logger = logging.getLogger(__name__)

# Warning subtypes, for suppress_warnings and CI: lab.fail, lab.xpass, lab.timeout, lab.crash.
SUBTYPES = {
    LabStatus.FAILED: "fail",
    LabStatus.XPASS: "xpass",
    LabStatus.TIMEOUT: "timeout",
    LabStatus.CRASHED: "crash",
}
# A lab that skipped itself (unittest.SkipTest: the upstream objects it runs are absent) is a
# warning of its own, lab.skipped: not a failure, but not a pass either, so a strict build
# stops on it unless STRICT_ALLOW names it (as it names upstream.missing). A `:needs: cuda`
# lab on a machine without a GPU is not reported: that skip is a property of the hardware.
SKIP_SUBTYPE = "skipped"


def progress_line(index: int, total: int, job: Job, page: PageResult) -> str:
    """``labs [3/13] serving/scheduler: 3 labs, 0.80 s, all passed``."""
    seconds = sum(lab.seconds for lab in page.labs)
    bad = [lab.status for lab in page.labs if not lab.ok]
    verdict = "all passed" if not bad else f"{len(bad)} not fine ({', '.join(sorted(set(bad)))})"
    count = f"{len(page.labs)} lab{'s' if len(page.labs) != 1 else ''}"
    return f"labs [{index}/{total}] {job.docname}: {count}, {seconds:.2f} s, {verdict}"


def slowest(
    specs: dict[str, list[LabSpec]], results: dict[str, PageResult], count: int = 5
) -> list[str]:
    """The ``count`` slowest labs that ran, as lines ``  1.23 s  page: title``."""
    timed = []
    for docname, page_specs in specs.items():
        for spec in page_specs:
            result = result_of(results, spec)
            if result is not None:
                timed.append((result.seconds, docname, spec.title))
    timed.sort(key=lambda row: (-row[0], row[1], row[2]))
    return [f"  {seconds:6.2f} s  {docname}: {title}" for seconds, docname, title in timed[:count]]


def report_problems(specs: dict[str, list[LabSpec]], results: dict[str, PageResult]) -> int:
    """One error per lab that is not fine, at the page and line of the example to blame, and a
    ``lab.skipped`` warning per lab that skipped itself; returns how many errors."""
    failed = 0
    for docname in sorted(specs):
        if docname not in results:
            continue
        for spec in specs[docname]:
            result = result_of(results, spec)
            if result is not None and is_reported_skip(spec, result):
                logger.warning(
                    f'lab "{spec.title}" skipped: {result.message}. A skip is not a pass: run '
                    "`make upstreams` so that the lab runs, or allow skips explicitly with "
                    "STRICT_ALLOW=upstream.missing,lab.skipped",
                    type="lab",
                    subtype=SKIP_SUBTYPE,
                    location=where(docname, spec, result),
                )
                continue
            if result is None or result.ok or result.status == LabStatus.NOT_RUN:
                continue
            failed += 1
            logger.error(
                problem_text(spec, result),
                type="lab",
                subtype=SUBTYPES.get(result.status, result.status.value),
                location=where(docname, spec, result),
            )
    return failed


def is_reported_skip(spec: LabSpec, result: LabResult) -> bool:
    """A skip the build reports as ``lab.skipped``: the lab ran and skipped itself. A lab that
    was never started because it ``:needs:`` hardware this machine lacks is not reported."""
    return result.status == LabStatus.SKIPPED and not (spec.needs and not result.examples)


def where(docname: str, spec: LabSpec, result: LabResult) -> str | tuple[str, int]:
    """The file and line to blame: the page's, or an included file's when the lab is in one (its
    example lines are that file's lines)."""
    line = problem_line(spec, result)
    return f"{spec.source}:{line}" if spec.source else (docname, line)


def problem_line(spec: LabSpec, result: LabResult) -> int:
    """The page line to blame: the failing (or hung, or crashing) example, else the lab."""
    if result.failed_example is not None and result.failed_example < len(spec.examples):
        return spec.examples[result.failed_example].line
    return spec.start_line


def problem_text(spec: LabSpec, result: LabResult) -> str:
    """What went wrong, in words, for the log and the JUnit report."""
    head = f'lab "{spec.title}" {STATUS_WORDS[result.status]}'
    if result.status == LabStatus.XPASS:
        return f"{head}; remove :expect-failure: or make the claim fail again"
    index = result.failed_example
    if result.status == LabStatus.FAILED and index is not None:
        example = spec.examples[index]
        got = result.examples[index] if index < len(result.examples) else None
        actual = got.got if got else ""
        return (
            f"{head} at example {index + 1}:\n"
            f"{_indent('>>> ' + example.source.rstrip())}\n"
            f"Expected:\n{_indent(example.want or '(nothing)')}\n"
            f"Got:\n{_indent(actual or '(nothing)')}"
        )
    return f"{head}: {result.message}"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip("\n").split("\n"))
