"""atlas.refs: the bibliography's rules, chapter reference lists, and link checking.

Modules, one job each:

- ``bib``: the bibliography file, read once, and the rules every entry must follow;
  ``bibfile``: pybtex can read each ``.bib`` file (a project-file check, before the build);
- ``checks``: the build's errors (a missing cited key, an entry without url, a malformed arXiv
  identifier, a raw link to a paper the bibliography holds), from ``bib``'s rules;
- ``duplicates``: one key per work (the same arXiv id, DOI or title under two keys) and the key
  convention, at the .bib file and line;
- ``registry_cites``: the registries' ``cite:KEY`` sources resolved against the bibliography;
- ``arxiv``: what an arXiv identifier or paper URL is, Sphinx-free, shared by the checks;
- ``directive``: ``chapter-references``, the works cited in a chapter; ``state`` re-reads it
  when its folder gains or loses a page;
- ``config``: the link check's settings (cache, pacing, back-off, breaker, budget);
- ``linkcheck``: the ``linkcheck`` builder and the JSON report it writes;
- ``checker``: its checker and workers (answers from git objects and ``cache`` first,
  back-off, time budget, 429 cap); ``pacing``: pacing and the circuit breaker per host;
- ``github``: pinned GitHub links verified from the local git objects, not the network;
- ``cache``: recent link-check answers, so a re-run within their age sends nothing;
- ``report``: ``python -m atlas.refs.report``, the link check's report, readable.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.project.registry import add_check, add_settings
    from atlas.refs.bibfile import check_bibfiles_readable
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
    add_settings(app, RefsConfig)
    add_check(app, check_bibfiles_readable, order=30)  # before sphinxcontrib-bibtex reads them
    # env_version: bump when RefsState changes shape.
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
