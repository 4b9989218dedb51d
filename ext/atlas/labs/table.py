"""The "Labs" page: the ``labs-report`` directive and its table of every lab of the book (like
sphinx-gallery's execution times).

The table is built from the merged environment in Sphinx's main process, after every page was
read (under ``-j`` too), so it lists every lab of the book whatever process read its page.
"""

from __future__ import annotations

from collections.abc import Mapping

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from atlas.labs.kinds import KINDS
from atlas.labs.model import LabResult, LabSpec, LabStatus, PageResult, environment_of, result_of
from atlas.labs.render import STATUS_WORDS, UNTIMED
from atlas.project.order import book_order
from atlas.ui import N_, _

# The summary's words, in the order the summary lists them.
SUMMARY_WORDS = {
    LabStatus.PASSED: N_("passed"),
    LabStatus.FAILED: N_("failed"),
    LabStatus.XPASS: N_("passed unexpectedly"),
    LabStatus.TIMEOUT: N_("timed out"),
    LabStatus.CRASHED: N_("crashed"),
    LabStatus.XFAIL: N_("failed as expected"),
    LabStatus.SKIPPED: N_("skipped"),
    LabStatus.NOT_RUN: N_("not run"),
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
    specs: dict[str, list[LabSpec]],
    results: dict[str, PageResult],
    rank: Mapping[str, int] | None = None,
) -> list[tuple[LabSpec, LabResult | None, str]]:
    """Every lab with its result and environment, in page order (the reading order ``rank``
    gives, pages it does not know after the rest by name; labs as they appear): never by
    duration, which differs from run to run and between serial and ``-j`` builds, so that the
    page is the same whatever the timings."""
    rank = rank or {}
    pages = sorted(specs, key=lambda docname: (rank.get(docname, len(rank)), docname))
    return [
        (spec, result_of(results, spec), environment_of(results, docname))
        for docname in pages
        for spec in specs[docname]
    ]


def kinds_by_chapter(specs: dict[str, list[LabSpec]]) -> dict[str, dict[str, int]]:
    """How many labs of each kind (check, model) each chapter has; a chapter is the first folder
    of a page's name (``serving/index`` and ``serving/scheduler``: ``serving``), a page at the
    top of the book is its own."""
    counts: dict[str, dict[str, int]] = {}
    for docname in sorted(specs):
        chapter = docname.split("/")[0]
        for spec in specs[docname]:
            per_kind = counts.setdefault(chapter, dict.fromkeys(KINDS, 0))
            per_kind[spec.kind] = per_kind.get(spec.kind, 0) + 1
    return counts


def in_reading_order(
    by_chapter: dict[str, dict[str, int]], rank: Mapping[str, int]
) -> dict[str, dict[str, int]]:
    """The chapters as the reader meets them: by the rank of their first page in the reading
    order; chapters the order does not know last, by name."""
    first: dict[str, int] = {}
    for docname, place in rank.items():
        chapter = docname.split("/")[0]
        first[chapter] = min(first.get(chapter, place), place)
    ordered = sorted(by_chapter.items(), key=lambda item: (first.get(item[0], len(rank)), item[0]))
    return dict(ordered)


def _kinds_table(
    specs: dict[str, list[LabSpec]], titles: dict[str, str], rank: Mapping[str, int]
) -> list[nodes.Node]:
    """The count of each kind per chapter: checks compare with something independent, models
    show our own numbers (atlas.labs.kinds)."""
    counts = in_reading_order(kinds_by_chapter(specs), rank)
    totals = {kind: sum(per[kind] for per in counts.values()) for kind in KINDS}
    checks, models = totals["check"], totals["model"]
    checks_said = (
        _("{n} check compares with something independent of the code it checks;")
        if checks == 1
        else _("{n} checks compare with something independent of the code they check;")
    )
    models_said = (
        _("{n} model shows our own model's numbers and checks them against nothing independent:")
        if models == 1
        else _(
            "{n} models show our own model's numbers and check them against nothing independent:"
        )
    )
    intro = nodes.paragraph("", checks_said.format(n=checks) + " " + models_said.format(n=models))
    table = nodes.table(classes=["atlas-labs-kinds"])
    group = nodes.tgroup(cols=3)
    table += group
    for width in (50, 25, 25):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    header = nodes.row()
    for label in (_("Chapter"), _("Checks"), _("Models")):
        header += _cell(nodes.Text(label))
    head += header
    group += head
    body = nodes.tbody()
    for chapter, per_kind in counts.items():
        row = nodes.row()
        row += _cell(nodes.Text(titles.get(f"{chapter}/index", titles.get(chapter, chapter))))
        row += _cell(nodes.Text(str(per_kind["check"])))
        row += _cell(nodes.Text(str(per_kind["model"])))
        body += row
    group += body
    return [intro, table]


def _chapter_row(
    app: Sphinx, fromdocname: str, chapter: str, titles: dict[str, str], cols: int
) -> nodes.row:
    """The row that opens a chapter's labs: its title, linked, across every column."""
    row = nodes.row(classes=["atlas-labs-chapter"])
    title = titles.get(chapter, chapter)
    if chapter in titles:
        uri = app.builder.get_relative_uri(fromdocname, chapter)
        cell = _cell(nodes.strong("", "", nodes.reference("", title, internal=True, refuri=uri)))
    else:
        cell = _cell(nodes.strong("", title))
    cell["morecols"] = cols - 1
    row += cell
    return row


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
    order, chapter_of = book_order(app.env, app.config.root_doc)
    reading_rank = {docname: i for i, docname in enumerate(order)}
    table_rows = rows(specs, results, reading_rank)
    if not table_rows:
        return [nodes.paragraph("", _("This book has no labs yet."))]
    counts: dict[LabStatus, int] = {}
    for _spec, result, _environment in table_rows:
        status = result.status if result else LabStatus.NOT_RUN
        counts[status] = counts.get(status, 0) + 1
    total = sum(result.seconds for _spec, result, _env in table_rows if result)
    pages = len({spec.docname for spec, _result, _env in table_rows})
    summary = ", ".join(
        f"{counts[status]} {_(word)}" for status, word in SUMMARY_WORDS.items() if status in counts
    )
    took = _("; {seconds:.2f} s in all").format(seconds=total) if show_time else ""
    said = _("{labs} labs on {pages} pages ({summary}){took}.")
    said = said.format(labs=len(table_rows), pages=pages, summary=summary, took=took)
    environments = {environment for _spec, _result, environment in table_rows if environment}
    one_environment = len(environments) == 1
    if one_environment:  # said once for the whole table, not in every row
        said += " " + _("Every lab ran in {environment}.").format(environment=environments.pop())
    intro = nodes.paragraph("", said)
    labels = [_("Page"), _("Lab"), _("Status"), _("Time")]
    widths = [28, 44, 16, 12]
    if not one_environment:
        labels.append(_("Environment"))
        widths = [25, 35, 14, 10, 16]
    table = nodes.table(classes=["atlas-labs-table"])
    group = nodes.tgroup(cols=len(labels))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    header = nodes.row()
    for label in labels:
        header += _cell(nodes.Text(label))
    head += header
    group += head
    body = nodes.tbody()
    chapter = None
    for spec, result, environment in table_rows:
        here = chapter_of.get(spec.docname, spec.docname.split("/")[0])
        if here != chapter:  # a row that names the chapter, spanning the table
            chapter = here
            body += _chapter_row(app, fromdocname, here, titles, len(labels))
        uri = app.builder.get_relative_uri(fromdocname, spec.docname)
        page_title = titles.get(spec.docname, spec.docname)
        status = result.status if result else LabStatus.NOT_RUN
        row = nodes.row(classes=[f"atlas-lab-{status}"])
        row += _cell(nodes.reference("", page_title, internal=True, refuri=uri))
        row += _cell(nodes.reference("", spec.title, internal=True, refuri=f"{uri}#{spec.anchor}"))
        row += _cell(nodes.Text(_(STATUS_WORDS[status]).split(":")[0]))
        timed = show_time and result and status not in UNTIMED
        seconds = f"{result.seconds:.2f}\u00a0s" if timed else ""
        row += _cell(nodes.Text(seconds))
        if not one_environment:
            row += _cell(nodes.Text(environment))
        body += row
    group += body
    return [intro, *_kinds_table(specs, titles, reading_rank), table]
