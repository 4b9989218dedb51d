"""The book's problem bank: what ``{problem-index}`` becomes once every page is read.

Every problem of the book, grouped by chapter in reading order, one line each with its topic,
difficulty and tags; before them a sentence and a table of counts (per chapter, per difficulty,
interview). In HTML a filter (chapter, topic, difficulty, the interview tag) runs in the browser
from ``static/atlas-bank.js``: the problems' data is embedded in the page as JSON, since a page
opened from ``file://`` may not fetch a JSON file beside it. The PDF has no filter: it keeps the
list grouped by chapter.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass

from docutils import nodes
from sphinx.application import Sphinx

from atlas.project.order import book_order
from atlas.teach.problems import (
    DIFFICULTIES,
    ProblemInfo,
    badges,
    problem_index_node,
    problems_state,
)
from atlas.ui import _

INTERVIEW = "interview"


@dataclass(frozen=True)
class Chapter:
    """A chapter of the bank: its page, its title as this edition shows it, its problems."""

    docname: str
    title: str
    problems: list[ProblemInfo]


def chapters(app: Sphinx) -> list[Chapter]:
    """The book's problems by chapter, chapters and pages in reading order."""
    env = app.env
    problems = problems_state(env).problems
    order, chapter_of = book_order(env, app.config.root_doc)
    rank = {docname: i for i, docname in enumerate(order)}
    found: dict[str, list[ProblemInfo]] = {}
    for docname in sorted(problems, key=lambda d: (rank.get(d, len(rank)), d)):
        chapter = chapter_of.get(docname, docname.split("/")[0] + "/index")
        found.setdefault(chapter, []).extend(problems[docname])
    return [
        Chapter(name, env.titles[name].astext() if name in env.titles else name, infos)
        for name, infos in found.items()
    ]


def build_index(app: Sphinx, fromdocname: str) -> list[nodes.Node]:
    """Counts, the filter (HTML only), then one group per chapter with one item per problem."""
    groups = chapters(app)
    if not groups:
        return [nodes.paragraph("", _("This book has no problems yet."))]
    every = [info for group in groups for info in group.problems]
    out: list[nodes.Node] = [
        nodes.paragraph("", _count(len(every), len(groups))),
        nodes.paragraph("", _by_difficulty(every)),
        _counts_table(groups),
    ]
    if app.builder.format == "html":
        out.append(nodes.raw("", _filter_html(groups), format="html"))
    for group in groups:
        box = nodes.container(classes=["atlas-bank-chapter"])
        rubric = nodes.rubric("", "", classes=["atlas-problem-chapter"])
        known = group.docname in app.env.titles
        uri = app.builder.get_relative_uri(fromdocname, group.docname) if known else ""
        rubric += (
            nodes.reference("", group.title, internal=True, refuri=uri)
            if uri
            else nodes.Text(group.title)
        )
        items = nodes.bullet_list(classes=["atlas-problem-index"])
        for info in sorted(group.problems, key=lambda i: (_(i.topic).lower(), i.number)):
            items += _item(app, fromdocname, info)
        box += [rubric, items]
        out.append(box)
    return out


def _item(app: Sphinx, fromdocname: str, info: ProblemInfo) -> nodes.list_item:
    """``Title`` (topic) difficulty tags, linked to the problem; its id is the filter's key."""
    item = nodes.list_item(ids=[f"bank-{info.label}"])
    para = nodes.paragraph()
    page = app.builder.get_relative_uri(fromdocname, info.docname)
    para += nodes.reference("", info.title, internal=True, refuri=f"{page}#{info.anchor}")
    para += nodes.Text(" (")
    para += nodes.emphasis("", _(info.topic))
    para += nodes.Text(")")
    para += badges(info)
    item += para
    return item


def _count(problems: int, chapters: int) -> str:
    """``114 problems in 16 chapters.``, in the edition's language (one sentence per number)."""
    said = _("{n} problem") if problems == 1 else _("{n} problems")
    where = _("in {n} chapter.") if chapters == 1 else _("in {n} chapters.")
    return said.format(n=problems) + " " + where.format(n=chapters)


def _by_difficulty(problems: list[ProblemInfo]) -> str:
    counts = {d: sum(info.difficulty == d for info in problems) for d in DIFFICULTIES}
    return _(
        "By difficulty: {warm} warm-up, {standard} standard, {hard} hard; "
        "{interview} tagged interview."
    ).format(
        warm=counts["warm-up"],
        standard=counts["standard"],
        hard=counts["hard"],
        interview=sum(INTERVIEW in info.tags for info in problems),
    )


def _counts_table(groups: list[Chapter]) -> nodes.table:
    """Chapter | Problems | warm-up | standard | hard | interview, and a total row."""
    head = [_("Chapter"), _("Problems"), *(_(d) for d in DIFFICULTIES), _(INTERVIEW)]

    def row(name: str, infos: list[ProblemInfo]) -> list[str]:
        by = [sum(i.difficulty == d for i in infos) for d in DIFFICULTIES]
        return [name, str(len(infos)), *map(str, by), str(sum(INTERVIEW in i.tags for i in infos))]

    every = [info for group in groups for info in group.problems]
    rows = [row(group.title, group.problems) for group in groups] + [row(_("All"), every)]
    table = nodes.table(classes=["atlas-bank-counts"])
    tgroup = nodes.tgroup(cols=len(head))
    table += tgroup
    tgroup += [nodes.colspec(colwidth=w) for w in (4, *([1] * (len(head) - 1)))]
    thead, tbody = nodes.thead(), nodes.tbody()
    tgroup += [thead, tbody]
    for cells, part in [(head, thead), *((r, tbody) for r in rows)]:
        line = nodes.row()
        for cell in cells:
            line += nodes.entry("", nodes.paragraph("", cell))
        part += line
    return table


def _filter_html(groups: list[Chapter]) -> str:
    """The filter's form (hidden until atlas-bank.js shows it) and the problems' data."""
    every = [(group, info) for group in groups for info in group.problems]
    data = [
        {
            "id": f"bank-{info.label}",
            "chapter": group.docname,
            "topic": info.topic,
            "difficulty": info.difficulty,
            "tags": list(info.tags),
        }
        for group, info in every
    ]
    topics = sorted({info.topic for _group, info in every}, key=lambda t: _(t).lower())

    def select(name: str, label: str, options: list[tuple[str, str]]) -> str:
        anything = html.escape(_("any"))
        opts = [f'<option value="">{anything}</option>']
        opts += [
            f'<option value="{html.escape(v)}">{html.escape(text)}</option>' for v, text in options
        ]
        return f'<label>{html.escape(label)} <select name="{name}">{"".join(opts)}</select></label>'

    shown = _("Showing {shown} of {total} problems.")
    legend, only = _("Filter the problems"), _("interview questions only")
    fields = [
        select("chapter", _("Chapter"), [(g.docname, g.title) for g in groups]),
        select("topic", _("Topic"), [(t, _(t)) for t in topics]),
        select("difficulty", _("Difficulty"), [(d, _(d)) for d in DIFFICULTIES]),
        f'<label><input type="checkbox" name="interview"> {html.escape(only)}</label>',
    ]
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return (
        f'<form id="atlas-bank-filter" class="atlas-bank-filter" hidden>'
        f"<fieldset><legend>{html.escape(legend)}</legend>"
        f"{''.join(fields)}"
        f'<p class="atlas-bank-shown" aria-live="polite" data-template="{html.escape(shown)}"></p>'
        f"</fieldset></form>\n"
        f'<script type="application/json" id="atlas-bank-data">{payload}</script>\n'
    )


def fill_indexes(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for node in list(doctree.findall(problem_index_node)):
        node.replace_self(build_index(app, docname))
