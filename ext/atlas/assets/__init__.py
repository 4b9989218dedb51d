"""Offline JavaScript assets: MathJax and mermaid served from the build, never from a CDN.

Both come from npm packages whose versions ``package-lock.json`` locks; ``make html`` runs
``npm ci``. At the end of an HTML build the few files the pages need are copied from
``node_modules`` into ``_static/vendor/``.

sphinxcontrib-mermaid loads mermaid as an ES module (from a CDN, or locally with
``mermaid_use_local``); Chromium refuses ES-module imports on ``file://``, so a book opened from
disk would show diagrams as text. We replace its page hook with the classic build
(``mermaid.min.js``, which sets ``window.mermaid``) and a small renderer of our own.

Every build also parses every diagram with the pinned mermaid, in node (``diagrams``, the
Sphinx side; ``mermaid_parser``, node and the cache by hash; ``mermaid_parse.mjs``, the script):
a syntax error is an error at its page and line, not a "Syntax error" box in the reader's browser.

Modules: this one (the copy and the page hook), ``config``, ``check`` (the npm files are there,
at their locked versions: a project-file check handed to atlas.project), ``diagrams``,
``mermaid_parser`` and ``codelines`` (each line of a code block its own element, so that long
lines wrap instead of scrolling). The search scorer (``search-scorer.js``) ranks titles that
hold the query first; ``search_text`` puts a little text of every section into the search index,
from which ``atlas-search-snippets.js`` draws each result's snippet (from disk too);
``figures`` gives numbered figures (Sphinx's numfig) their word in each edition.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

from atlas.assets.codelines import wrap_code_lines
from atlas.assets.config import AssetsConfig

logger = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
VENDOR = "vendor"

# (package-relative source, destination under _static/vendor). Folders are copied whole.
MERMAID_FILES = (("mermaid/dist/mermaid.min.js", "mermaid/mermaid.min.js"),)
MATHJAX_FILES = (
    ("mathjax/es5/tex-mml-chtml.js", "mathjax/tex-mml-chtml.js"),
    ("mathjax/es5/output", "mathjax/output"),
    ("mathjax/es5/input", "mathjax/input"),
    ("mathjax/es5/a11y", "mathjax/a11y"),
    ("mathjax/es5/ui", "mathjax/ui"),
    ("mathjax/es5/sre", "mathjax/sre"),
)


SEARCH_SCORER = Path(__file__).resolve().parent / "search-scorer.js"


def _config_inited(app: Sphinx, config: Config) -> None:
    config.html_static_path = [*config.html_static_path, str(STATIC)]
    if not config.html_search_scorer:  # a book may bring its own
        config.html_search_scorer = str(SEARCH_SCORER)


def _builder_inited(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    # the files copied at the end were checked by atlas.project.files (one clean error)
    # Replace sphinxcontrib-mermaid's ES-module loader (CDN or module import) with ours.
    for listener in list(app.events.listeners.get("html-page-context", [])):
        handler = listener.handler
        if getattr(handler, "__module__", "") == "sphinxcontrib.mermaid":
            app.disconnect(listener.id)


def _page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: nodes.document | None
) -> None:
    if app.builder.format != "html":
        return
    if templatename == "search.html":
        app.add_js_file("atlas-search-snippets.js", loading_method="defer")
    if doctree is None:
        return
    if "body" in context:
        context["body"] = wrap_code_lines(context["body"])
    from sphinxcontrib.mermaid import mermaid as mermaid_node

    if doctree.next_node(mermaid_node) is not None:
        app.add_js_file(f"{VENDOR}/mermaid/mermaid.min.js", priority=400)
        app.add_js_file("atlas-mermaid.js", priority=401)


def _copy_if_changed(src: Path, dst: Path) -> None:
    if src.is_dir():
        for child in src.rglob("*"):
            if child.is_file():
                _copy_if_changed(child, dst / child.relative_to(src))
        return
    if dst.exists():
        s, d = src.stat(), dst.stat()
        if s.st_size == d.st_size and int(s.st_mtime) == int(d.st_mtime):
            return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)


def _build_finished(app: Sphinx, exception: BaseException | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    root = AssetsConfig.of(app).node_modules
    target = Path(app.outdir) / "_static" / VENDOR
    for src, dst in MERMAID_FILES + MATHJAX_FILES:
        _copy_if_changed(root / src, target / dst)


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.assets import diagrams, figures, search_text
    from atlas.assets.check import check_offline_assets
    from atlas.project.registry import add_check, add_settings

    app.setup_extension("sphinxcontrib.mermaid")
    app.add_directive("mermaid", diagrams.LocatedMermaid, override=True)
    app.add_env_collector(diagrams.DiagramsCollector)
    app.connect("build-finished", diagrams.check_diagrams, priority=850)  # after the ledger
    add_settings(app, AssetsConfig)
    add_check(app, check_offline_assets, order=10, when="builder-inited")
    app.connect("config-inited", _config_inited)
    app.connect("config-inited", search_text.no_fetched_summaries)
    app.connect("config-inited", figures.figure_word, priority=figures.PRIORITY)
    app.connect("env-get-updated", figures.only_figures, priority=figures.BEFORE_NUMBERS)
    app.add_env_collector(search_text.SearchTextCollector)
    app.connect("builder-inited", search_text.use_index_with_text)
    app.add_css_file("atlas-code.css")
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _build_finished)
    # env_version: bump when diagrams.DiagramsState or search_text.SearchTextState change shape.
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
