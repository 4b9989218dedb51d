"""``chapter-references``: the works cited anywhere in this chapter, at the end of its index.

A plain ``bibliography`` directive cannot say "cited in this folder" (its filter language has
``docnames`` but no prefix test), and two citation lists holding the same key collide. So the
chapter list is a bullet list (no citation targets, no duplicate labels) filtered to the
documents of the chapter's folder; every ``{cite}`` links to the one citation list, the full
bibliography page. Options of ``bibliography`` still apply.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from docutils import nodes
from sphinxcontrib.bibtex.directives import BibliographyDirective

from atlas.refs.state import refs_state


class ChapterReferences(BibliographyDirective):
    def run(self) -> Sequence[nodes.Node]:
        env = self.state.document.settings.env
        folder = posixpath.dirname(env.docname)
        prefix = f"{folder}/" if folder else ""
        chapter = sorted(d for d in env.found_docs if d.startswith(prefix)) or [env.docname]
        names = ", ".join(repr(d) for d in chapter)
        self.options.setdefault("filter", f"docnames & {{{names}}}")
        self.options.setdefault("list", "bullet")
        refs_state(env).chapter_lists.add(env.docname)
        return super().run()
