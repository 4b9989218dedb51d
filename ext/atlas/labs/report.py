"""The "Labs" page (a table of every lab, like sphinx-gallery's execution times) and JUnit XML.

Both read the merged environment in Sphinx's main process, after every page was read (under
``-j`` too), so the table lists every lab of the book whatever process read its page.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from atlas.labs.model import NOT_RUN, OK_STATUSES, SKIPPED, LabResult, LabSpec, PageResult
from atlas.labs.render import STATUS_WORDS

SUMMARY_WORDS = {
    "passed": "passed",
    "failed": "failed",
    "xpass": "passed unexpectedly",
    "timeout": "timed out",
    "crashed": "crashed",
    "xfail": "failed as expected",
    "skipped": "skipped",
    "not run": "not run",
}


class labs_report_node(nodes.General, nodes.Element):  # noqa: N801 - docutils naming
    """Placeholder for the table of all labs; filled at ``doctree-resolved``."""


class LabsReportDirective(SphinxDirective):
    """```` ```{labs-report} ````: the table of every lab of the book."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        node = labs_report_node()
        self.set_source_info(node)
        return [node]


def rows(
    specs: dict[str, list[LabSpec]], results: dict[str, PageResult]
) -> list[tuple[LabSpec, LabResult | None, str]]:
    """Every lab with its result and environment, in page order (pages by name, labs as they
    appear): never by duration, which differs from run to run and between serial and ``-j``
    builds, so that the page is the same whatever the timings."""
    found = []
    for docname in sorted(specs):
        page = results.get(docname)
        for spec in specs[docname]:
            result = page.labs[spec.index] if page and spec.index < len(page.labs) else None
            found.append((spec, result, page.environment if page else ""))
    return found


def _cell(*children: nodes.Node) -> nodes.entry:
    entry = nodes.entry()
    paragraph = nodes.paragraph()
    paragraph.extend(children)
    entry += paragraph
    return entry


def build_table(
    app: Sphinx,
    fromdocname: str,
    specs: dict[str, list[LabSpec]],
    results: dict[str, PageResult],
    titles: dict[str, str],
    show_time: bool = True,
) -> list[nodes.Node]:
    """The summary paragraph and the table, with links relative to ``fromdocname``."""
    table_rows = rows(specs, results)
    if not table_rows:
        return [nodes.paragraph("", "This book has no labs yet.")]
    counts: dict[str, int] = {}
    for _, result, _ in table_rows:
        status = result.status if result else NOT_RUN
        counts[status] = counts.get(status, 0) + 1
    total = sum(result.seconds for _, result, _ in table_rows if result)
    pages = len({spec.docname for spec, _, _ in table_rows})
    summary = ", ".join(
        f"{counts[status]} {word}" for status, word in SUMMARY_WORDS.items() if status in counts
    )
    took = f"; {total:.2f} s in all" if show_time else ""
    intro = nodes.paragraph("", f"{len(table_rows)} labs on {pages} pages ({summary}){took}.")
    table = nodes.table(classes=["atlas-labs-table"])
    group = nodes.tgroup(cols=5)
    table += group
    for width in (25, 35, 14, 10, 16):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    header = nodes.row()
    for label in ("Page", "Lab", "Status", "Time", "Environment"):
        header += _cell(nodes.Text(label))
    head += header
    group += head
    body = nodes.tbody()
    for spec, result, environment in table_rows:
        uri = app.builder.get_relative_uri(fromdocname, spec.docname)
        page_title = titles.get(spec.docname, spec.docname)
        row = nodes.row(classes=[f"atlas-lab-{(result.status if result else NOT_RUN)}"])
        row += _cell(nodes.reference("", page_title, internal=True, refuri=uri))
        row += _cell(nodes.reference("", spec.title, internal=True, refuri=f"{uri}#{spec.anchor}"))
        status = result.status if result else NOT_RUN
        row += _cell(nodes.Text(STATUS_WORDS.get(status, status).split(":")[0]))
        timed = show_time and result and status not in (SKIPPED, NOT_RUN)
        seconds = f"{result.seconds:.2f}\u00a0s" if timed else ""
        row += _cell(nodes.Text(seconds))
        row += _cell(nodes.Text(environment))
        body += row
    group += body
    return [intro, table]


def write_junit(
    path: Path,
    specs: dict[str, list[LabSpec]],
    results: dict[str, PageResult],
    source_of: Callable[[str], str],
) -> None:
    """One testsuite per page, one testcase per lab; failures carry the message and location."""
    suites = ElementTree.Element("testsuites", name="labs")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for docname in sorted(specs):
        page = results.get(docname)
        suite = ElementTree.SubElement(suites, "testsuite", name=docname)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        seconds = 0.0
        for spec in specs[docname]:
            result = page.labs[spec.index] if page and spec.index < len(page.labs) else None
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
            if result is None or result.status in (SKIPPED, NOT_RUN):
                counts["skipped"] += 1
                reason = result.message if result else "not run"
                ElementTree.SubElement(case, "skipped", message=reason)
            elif result.status not in OK_STATUSES:
                kind = "failure" if result.status in ("failed", "xpass") else "error"
                counts["failures" if kind == "failure" else "errors"] += 1
                element = ElementTree.SubElement(case, kind, message=result.status)
                element.text = problem_text(spec, result)
        suite.attrib.update({k: str(v) for k, v in counts.items()}, time=f"{seconds:.3f}")
        for name, value in counts.items():
            totals[name] += value
    suites.attrib.update({k: str(v) for k, v in totals.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    ElementTree.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def problem_line(spec: LabSpec, result: LabResult) -> int:
    """The page line to blame: the failing (or hung, or crashing) example, else the lab."""
    if result.failed_example is not None and result.failed_example < len(spec.examples):
        return spec.examples[result.failed_example].line
    return spec.start_line


def problem_text(spec: LabSpec, result: LabResult) -> str:
    """What went wrong, in words, for the log and the JUnit report."""
    head = f'lab "{spec.title}" {STATUS_WORDS.get(result.status, result.status)}'
    if result.status == "xpass":
        return f"{head}; remove :expect-failure: or make the claim fail again"
    index = result.failed_example
    if result.status == "failed" and index is not None:
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
