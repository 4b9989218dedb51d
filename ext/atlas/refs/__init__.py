"""atlas.refs: the bibliography's rules, chapter reference lists, and link checking.

- :mod:`atlas.refs.checks`: errors for a missing cited key, an entry without url, a malformed
  arXiv identifier, a raw link to a paper the bibliography holds.
- :mod:`atlas.refs.directive`: ``chapter-references``, the works cited in a chapter.
- :mod:`atlas.refs.linkcheck`: the ``linkcheck`` builder with pacing, back-off, a cache and
  pinned GitHub links verified from git objects; :mod:`atlas.refs.report` prints its report.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment


def _chapter_docs_changed(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Re-read chapter indexes when a page joins or leaves their folder (their filter lists it)."""
    if not (added or removed):
        return []
    folders = {d.rpartition("/")[0] for d in added | removed}
    return [
        doc
        for doc in getattr(env, "atlas_chapter_references", set())
        if doc in env.found_docs and doc.rpartition("/")[0] in folders
    ]


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    mine = getattr(env, "atlas_chapter_references", set())
    env.atlas_chapter_references = mine | getattr(other, "atlas_chapter_references", set())


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    getattr(env, "atlas_chapter_references", set()).discard(docname)


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.refs.checks import (
        check_bibfiles,
        check_one_citation_list,
        check_page,
        fail_on_bib_problems,
        quiet_duplicate_key_warnings,
    )
    from atlas.refs.config import RefsConfig
    from atlas.refs.directive import ChapterReferences
    from atlas.refs.linkcheck import AtlasLinkcheckBuilder

    app.setup_extension("sphinxcontrib.bibtex")
    app.add_directive("chapter-references", ChapterReferences)
    app.connect("builder-inited", check_bibfiles)
    app.connect("build-finished", fail_on_bib_problems)
    app.connect("builder-inited", quiet_duplicate_key_warnings, priority=100)  # before bibtex
    app.connect("doctree-read", check_page)
    app.connect("env-check-consistency", check_one_citation_list)
    app.connect("env-get-outdated", _chapter_docs_changed)
    app.connect("env-merge-info", _merge)
    app.connect("env-purge-doc", _purge)

    app.add_builder(AtlasLinkcheckBuilder, override=True)
    RefsConfig.register(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
