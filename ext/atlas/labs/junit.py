"""The JUnit XML report of the labs (``_build/labs/junit.xml``), for CI.

One testsuite per page, one testcase per lab. A lab that failed or passed against
``:expect-failure:`` is a failure; a timeout or a crash is an error; a skipped or not-run lab is
skipped. Failures carry the same text and line as the build log (:mod:`atlas.labs.log`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

from atlas.labs.log import problem_line, problem_text
from atlas.labs.model import LabSpec, LabStatus, PageResult, result_of

FAILURES = frozenset({LabStatus.FAILED, LabStatus.XPASS})  # the claim is wrong
SKIPS = frozenset({LabStatus.SKIPPED, LabStatus.NOT_RUN})  # nothing was checked
COUNTS = ("tests", "failures", "errors", "skipped")


def write_junit(
    path: Path,
    specs: dict[str, list[LabSpec]],
    results: dict[str, PageResult],
    source_of: Callable[[str], str],
) -> None:
    """Write the report of every lab in ``specs``; ``source_of`` gives a page's file path."""
    suites = ElementTree.Element("testsuites", name="labs")
    totals = dict.fromkeys(COUNTS, 0)
    for docname in sorted(specs):
        suite = ElementTree.SubElement(suites, "testsuite", name=docname)
        counts = dict.fromkeys(COUNTS, 0)
        seconds = 0.0
        for spec in specs[docname]:
            result = result_of(results, spec)
            case = ElementTree.SubElement(
                suite,
                "testcase",
                classname=docname.replace("/", "."),
                name=spec.title,
                file=source_of(docname),
                line=str(problem_line(spec, result) if result else spec.start_line),
                time=f"{result.seconds:.3f}" if result else "0",
            )
            counts["tests"] += 1
            seconds += result.seconds if result else 0.0
            if result is None or result.status in SKIPS:
                counts["skipped"] += 1
                reason = result.message if result else "not run"
                ElementTree.SubElement(case, "skipped", message=reason)
            elif not result.ok:
                kind = "failure" if result.status in FAILURES else "error"
                counts["failures" if kind == "failure" else "errors"] += 1
                element = ElementTree.SubElement(case, kind, message=result.status.value)
                element.text = problem_text(spec, result)
        suite.attrib.update({k: str(v) for k, v in counts.items()}, time=f"{seconds:.3f}")
        for name, value in counts.items():
            totals[name] += value
    suites.attrib.update({k: str(v) for k, v in totals.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    ElementTree.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
