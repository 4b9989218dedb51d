"""atlas.refs: the bibliography's rules, chapter reference lists, and link checking.

- :mod:`atlas.refs.checks`: errors for a missing cited key, an entry without url, a malformed
  arXiv identifier, a raw link to a paper the bibliography holds.
- :mod:`atlas.refs.directive`: ``chapter-references``, the works cited in a chapter;
  :mod:`atlas.refs.state` re-reads it when its folder gains or loses a page.
- :mod:`atlas.refs.linkcheck`: the ``linkcheck`` builder and the JSON report it writes;
  :mod:`atlas.refs.checker` its checker and workers (answers from git objects and
  :mod:`atlas.refs.cache` first, back-off, time budget, 429 cap), :mod:`atlas.refs.pacing` the
  pacing and circuit breaker per host; :mod:`atlas.refs.report` prints the report.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


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
    from atlas.refs.state import RefsCollector

    app.setup_extension("sphinxcontrib.bibtex")
    app.add_directive("chapter-references", ChapterReferences)
    app.connect("builder-inited", check_bibfiles)
    app.connect("build-finished", fail_on_bib_problems)
    app.connect("builder-inited", quiet_duplicate_key_warnings, priority=100)  # before bibtex
    app.connect("doctree-read", check_page)
    app.connect("env-check-consistency", check_one_citation_list)
    app.add_env_collector(RefsCollector)

    app.add_builder(AtlasLinkcheckBuilder, override=True)
    RefsConfig.register(app)
    # env_version: bump when RefsState changes shape.
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
