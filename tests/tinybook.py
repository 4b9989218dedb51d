"""A small book written on the fly, built with the fixtures' settings, and opened in Chromium:
what the tests of reader-facing features (search, notebooks, titles, tables, diagrams, code
width) share, so that each test states only its pages and what it checks."""

from __future__ import annotations

import shutil
from io import StringIO
from pathlib import Path
from typing import Any

from sphinx.testing.util import SphinxTestApp

CONF = (
    "import os, runpy\n"
    "globals().update({k: v for k, v in runpy.run_path(os.environ['ATLAS_BOOK_CONF']).items()"
    " if k[:2] != '__'})\n"
)


def build_book(src: Path, pages: dict[str, str], conf_extra: str = "") -> tuple[Path, str]:
    """Write ``pages`` (path -> MyST text) and a conf.py under ``src``, build HTML; return the
    HTML folder and the build's warnings."""
    for name, text in {**pages, "conf.py": CONF + conf_extra}.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    return sphinx_build(src)


def sphinx_build(
    src: Path, builder: str = "html", builddir: Path | None = None, **overrides: Any
) -> tuple[Path, str]:
    """Build the book at ``src`` in one process (``SphinxTestApp``, cleaned up even when the
    build raises), ``overrides`` as ``-D`` settings; return the output folder and the warnings.
    The one way the tests build a fixture book in-process, so each states only its settings."""
    warnings = StringIO()
    app = SphinxTestApp(
        builder,
        srcdir=src,
        builddir=builddir,
        confoverrides=overrides or None,
        status=StringIO(),
        warning=warnings,
    )
    try:
        app.build()
    finally:
        app.cleanup()
    return Path(app.outdir), warnings.getvalue()


def launch(pw: Any) -> Any:
    """Debian's Chromium, headless and offline-minded, as every browser test runs it."""
    return pw.chromium.launch(
        executable_path=shutil.which("chromium"),
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    )


def search_page(html: Path, queries: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(page, snippet) of each query's results, in order, from the built search page opened
    from disk (page: the name without .html; snippet: the result's text under its title, ""
    when it has none). The ranking, snippet and Chinese-search tests read them."""
    from playwright.sync_api import sync_playwright

    found: dict[str, list[tuple[str, str]]] = {}
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_context(offline=True).new_page()
            for query in queries:
                page.goto((html / "search.html").as_uri() + "?q=" + query)
                page.wait_for_function(
                    "document.querySelector('#search-results p.search-summary')"
                    "?.textContent.length > 0",
                    timeout=20_000,
                )
                rows = page.locator("#search-results ul.search li").evaluate_all(
                    "items => items.map(li => [li.querySelector('a').getAttribute('href'),"
                    " li.querySelector('p.context')?.textContent ?? ''])"
                )
                found[query] = [
                    (link.split("#")[0].split("?")[0].removesuffix(".html"), snippet)
                    for link, snippet in rows
                ]
        finally:
            browser.close()
    return found


def search_results(html: Path, queries: list[str]) -> dict[str, list[str]]:
    """The pages (names without .html) of each query's results, in order (:func:`search_page`)."""
    return {q: [name for name, _ in rows] for q, rows in search_page(html, queries).items()}
