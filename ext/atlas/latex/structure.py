"""The PDF's book structure, built from the root page's toctrees.

Sphinx's LaTeX builder inlines every toctree where it stands. The Atlas's root page keeps its
toctrees under a "Map of the book" heading, so the chapters would become sections of that
heading, and the root page's own headings ("How to read it", ...) numbered chapters ahead of
them. For the PDF this post-transform rebuilds the shape a reader expects of a book:

- front matter, unnumbered (listed in the contents): the root page's own text as a chapter
  "Preface" (its headings that hold no toctree become sections of it), then the pages of the
  toctrees whose caption is in ``atlas_latex_front_matter``;
- then one ``\\part`` per other toctree caption, each page of that toctree a numbered chapter
  (its own sub-pages become sections);
- back matter, unnumbered: the pages of the toctrees whose caption is in
  ``atlas_latex_back_matter``. The bibliography's entries, which Sphinx gathers at the very end
  under a heading of their own, are put back on the page that holds the bibliography, under
  that page's heading.

Headings left with nothing but their toctrees are dropped. HTML is untouched.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.builders.latex.nodes import thebibliography
from sphinx.transforms.post_transforms import SphinxPostTransform

from atlas.latex.config import LatexConfig
from atlas.ui import N_, _

PREFACE = N_("Preface")


def _raw(tex: str) -> nodes.raw:
    return nodes.raw("", tex + "\n", format="latex")


def _top_level_files(node: nodes.Element) -> list[tuple[nodes.Element, addnodes.start_of_file]]:
    """The inlined pages of the root page's own toctrees, each with the node that holds it.

    Walked top-down: Sphinx's inlining assigns ``start_of_file.children`` without re-parenting
    them, so ``.parent`` inside an inlined page can point at that page's own old document.
    """
    found = []
    for child in node.children:
        if isinstance(child, addnodes.start_of_file):
            found.append((node, child))
        elif isinstance(child, nodes.Element):
            found += _top_level_files(child)
    return found


def _drop_emptied(node: nodes.Element) -> bool:
    """Remove toctree wrappers left empty, then headings they leave with only a title.

    Top-down through ``children`` (never ``.parent``, see :func:`_top_level_files`). Returns
    whether a wrapper was removed at or below ``node``; an empty heading that never held a
    toctree is the writer's and stays.
    """
    removed = False
    for child in list(node.children):
        if not isinstance(child, nodes.Element):
            continue
        below = _drop_emptied(child)
        if isinstance(child, nodes.compound) and "toctree-wrapper" in child["classes"]:
            if not child.children:
                node.remove(child)
                removed = True
        elif isinstance(child, nodes.section) and below and not _holds_content(child):
            node.remove(child)
        removed = removed or below
    return removed


def _hoist_subpages(page: addnodes.start_of_file) -> None:
    """Move the pages of a page's own toctrees to the end of that page, as its sections.

    Wherever the toctree stood (a hidden one near the top, one under a "Reading order"
    heading), the chapter reads as its own text first, then its pages in toctree order.
    """
    located = _top_level_files(page)
    main = next((c for c in page.children if isinstance(c, nodes.section)), None)
    if not located or main is None:
        return
    for holder, sof in located:
        holder.remove(sof)
    _drop_emptied(main)
    for _at, sof in located:
        main += sof
        _hoist_subpages(sof)


def _holds_content(node: nodes.Element) -> bool:
    """Whether a heading has anything left but its title (and empty toctree wrappers)."""
    for child in node.children:
        if isinstance(child, nodes.title | nodes.target):
            continue
        if isinstance(child, nodes.compound) and "toctree-wrapper" in child["classes"]:
            if not child.children:
                continue
        return True
    return False


class BookStructure(SphinxPostTransform):
    builders = ("latex",)
    default_priority = 900

    def run(self, **kwargs: Any) -> None:
        root = self.config.root_doc
        if self.env.docname != root or self.document.get("docname") != root:
            return
        top = self.document.next_node(nodes.section)
        if top is None or top.parent is not self.document:
            return
        located = _top_level_files(top)
        if not located:
            return
        files = {sof["docname"]: sof for _at, sof in located}
        # A translated edition matches the English caption (Sphinx keeps it as "rawcaption")
        # against the settings, and titles its parts with the translated one.
        toctrees = [
            (
                t.get("caption") or "",
                t.get("rawcaption") or t.get("caption") or "",
                [f for f in t["includefiles"] if f in files],
            )
            for t in self.env.get_doctree(root).findall(addnodes.toctree)
        ]
        for holder, sof in located:
            holder.remove(sof)
        _drop_emptied(top)
        for _at, sof in located:
            _hoist_subpages(sof)

        self._preface(top)
        settings = LatexConfig.of(self)
        front_captions, back_captions = set(settings.front_matter), set(settings.back_matter)
        body: list[nodes.Node] = [_raw(r"\atlasfrontmatter")]
        rest: list[nodes.Node] = [_raw(r"\atlasmainmatter")]
        back: list[nodes.Node] = [_raw(r"\atlasbackmatter")]
        for caption, english, docnames in toctrees:
            pages = [files.pop(d) for d in docnames if d in files]
            if not pages:
                continue
            if english in front_captions:
                body += pages
            elif english in back_captions:
                back += pages
            else:
                if caption:
                    rest.append(_raw(rf"\part{{{self._escape(caption)}}}"))
                rest += pages
        rest += files.values()  # pages of toctrees the root's doctree did not list: keep them
        if len(back) > 1:
            rest += back
        first_heading = next(
            (i for i, c in enumerate(top.children) if isinstance(c, nodes.section)), None
        )
        index = first_heading if first_heading is not None else len(top.children)
        top.insert(index, body[0])
        top.extend(body[1:] + rest)
        self._bibliography_in_place(top)

    def _bibliography_in_place(self, top: nodes.section) -> None:
        bib = next(iter(self.document.findall(thebibliography)), None)
        if bib is None:
            return
        homes = Counter(c.get("docname") for c in bib.findall(nodes.citation))
        home = homes.most_common(1)[0][0] if homes else None
        page = next((s for s in top.findall(addnodes.start_of_file) if s["docname"] == home), None)
        if page is None:
            return
        bib.parent.remove(bib)
        section = page.next_node(nodes.section) or page
        section += [_raw(r"\atlasbibliographyinplace"), bib]

    def _preface(self, top: nodes.section) -> None:
        """Gather the root page's own text into one opening chapter, "Preface".

        Its opening prose comes first; its remaining headings (those that held no toctree)
        become sections of that chapter, rather than chapters of a page or two each.
        """
        start = 1 if top.children and isinstance(top[0], nodes.title) else 0
        content = [c for c in top.children[start:] if not isinstance(c, nodes.target | nodes.raw)]
        if not content:
            return
        section = nodes.section("", nodes.title("", _(PREFACE)), ids=["atlas-preface"])
        for child in content:
            top.remove(child)
            section += child
        top.insert(start, section)

    def _escape(self, text: str) -> str:
        from sphinx.util.texescape import escape

        return escape(text, self.config.latex_engine)
