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
    warnings = StringIO()
    app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=warnings)
    try:
        app.build()
    finally:
        app.cleanup()
    return src / "_build" / "html", warnings.getvalue()


def launch(pw: Any) -> Any:
    """Debian's Chromium, headless and offline-minded, as every browser test runs it."""
    return pw.chromium.launch(
        executable_path=shutil.which("chromium"),
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    )
