"""In the PDF, solutions move to an "Answers" section at the end of their chapter.

A printed book cannot collapse a dropdown: an answer printed under its question spoils it. This
LaTeX post-transform (after :class:`atlas.latex.structure.BookStructure` has given the document
its chapters) takes every solution out of its problem, leaves a link "Answer: page N" in its
place, and appends the answers, each with a link back to its question, to the end of the
chapter. Labs inside a solution move with it and are rendered there.

The walk is top-down through ``children``: in the LaTeX builder's assembled tree ``.parent``
may point into a page's old document (see :mod:`atlas.latex.structure`).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from atlas.teach.problems import ProblemInfo
from atlas.ui import _


def is_chapter(docname: str) -> bool:
    """A chapter's page is ``<chapter>/index`` (the root toctree lists it)."""
    return docname.count("/") == 1 and docname.endswith("/index")


Found = tuple[nodes.Element, nodes.Element, ProblemInfo]  # holder, solution, problem


def find_solutions(
    node: nodes.Element,
    chapter: nodes.Element | None,
    out: dict[int, tuple[nodes.Element, list[Found]]],
) -> None:
    """Group solutions by the chapter file (``start_of_file``) that holds them."""
    for child in node.children:
        if not isinstance(child, nodes.Element):
            continue
        if isinstance(child, addnodes.start_of_file):
            outer = chapter
            if outer is None or is_chapter(child["docname"]):
                outer = child
            find_solutions(child, outer, out)
        elif child.get("atlas_solution"):
            home = chapter if chapter is not None else node
            out.setdefault(id(home), (home, []))[1].append((node, child, child["atlas_solution"]))
        else:
            find_solutions(child, chapter, out)


def _answer(solution: nodes.Element, info: ProblemInfo) -> list[nodes.Node]:
    """The answer as printed at the chapter's end: heading, link back, the worked answer."""
    head = nodes.paragraph(classes=["atlas-answer-title"])
    head += nodes.target("", "", ids=[info.answer_anchor])
    head += nodes.strong("", _("Problem {number}: ").format(number=info.number) + info.title)
    head += nodes.Text(" ")
    back = nodes.reference("", "", refuri=f"%{info.docname}#{info.anchor}", internal=True)
    back += nodes.Text(_("back to the question"))
    head += nodes.Text("(")
    head += back
    head += nodes.Text(")")
    body = [c for c in solution.children if not isinstance(c, nodes.rubric)]
    box = nodes.container("", head, *body, classes=["atlas-answer"])
    return [box]


class AnswersAtChapterEnd(SphinxPostTransform):
    builders = ("latex",)
    default_priority = 950  # after BookStructure (900) has made the chapters

    def run(self, **kwargs: Any) -> None:
        groups: dict[int, tuple[nodes.Element, list[Found]]] = {}
        find_solutions(self.document, None, groups)
        for home, found in groups.values():
            section = nodes.section(ids=[nodes.make_id(f"atlas-answers-{home.get('docname', '')}")])
            section += nodes.title("", _("Answers"))
            for holder, solution, info in found:
                chapter_doc = home.get("docname") or info.docname
                link = nodes.paragraph(classes=["atlas-answer-link"])
                ref = nodes.reference(
                    "", "", refuri=f"%{chapter_doc}#{info.answer_anchor}", internal=True
                )
                ref += nodes.Text(_("Answer at the end of the chapter"))
                link += ref
                holder.replace(solution, link)
                section.extend(_answer(solution, info))
            main = next((c for c in home.children if isinstance(c, nodes.section)), home)
            main += section
