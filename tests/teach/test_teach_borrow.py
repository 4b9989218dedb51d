"""Taught code shown on one page and used on another (d2l's rule), with the back-links.

A lab may use taught code its page does not show when a page before it in its chapter shows
it (any page of the chapter, for the chapter's index), or a page of another chapter does; its
box then links to that page, and the page's runnable file names it. Otherwise the build
reports the import, as it does for code shown nowhere. Pages outside chapters neither borrow
nor lend.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

IMPORT = (
    ">>> import os, atlas.labkit\n"
    ">>> atlas.labkit.__path__.append(os.environ['ATLAS_TEST_LABKIT'])\n"
)


def build(src: Path) -> tuple[SphinxTestApp, str]:
    from io import StringIO

    warnings = StringIO()
    app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=warnings)
    try:
        app.build()
    finally:
        app.cleanup()
    return app, warnings.getvalue()


def page(app: SphinxTestApp, name: str) -> str:
    return (Path(app.outdir) / f"{name}.html").read_text(encoding="utf-8")


def lab(title: str, body: str) -> str:
    return f"```{{lab}} {title}\n{IMPORT}{body}```\n"


@pytest.fixture(scope="module")
def borrow_book(tmp_path_factory: pytest.TempPathFactory, rootdir: Path):
    src = tmp_path_factory.mktemp("borrow") / "test-teach"
    shutil.copytree(rootdir / "test-teach", src)
    shutil.rmtree(src / "ch")
    (src / "ch").mkdir()
    (src / "ch" / "index.md").write_text(
        "# A chapter\n\n"
        + lab(
            "Previews the chapter",
            ">>> from atlas.labkit.demo.other import TRIPLE\n>>> TRIPLE\n3\n",
        )
        + "\n```{toctree}\nborrows\nearly\nlate\n```\n"
    )
    (src / "ch" / "borrows.md").write_text(
        "# Borrows\n\n"
        + lab(
            "Uses what another chapter shows",
            ">>> from atlas.labkit.demo.kernel import double\n>>> double(5)\n10\n",
        )
    )
    (src / "ch" / "early.md").write_text(
        "# Early\n\n"
        + lab(
            "Uses what a later page shows",
            ">>> from atlas.labkit.demo.other import TRIPLE\n>>> TRIPLE\n3\n",
        )
    )
    (src / "ch" / "late.md").write_text(
        "# Late\n\nThe factor:\n\n```{labcode} demo/other.py::TRIPLE\n```\n\n"
        + lab(
            "Uses what it shows", ">>> from atlas.labkit.demo.other import TRIPLE\n>>> TRIPLE\n3\n"
        )
    )
    (src / "ch2").mkdir()
    (src / "ch2" / "index.md").write_text(
        "# Another chapter\n\nThe kernel doubles its input:\n\n"
        "```{labcode} demo/kernel.py::double\n```\n"
    )
    index = (src / "index.md").read_text().replace("ch/index\nbank\n", "ch/index\nch2/index\n")
    (src / "index.md").write_text(index)
    (src / "bank.md").unlink()
    os.environ["ATLAS_TEST_LABKIT"] = str(src / "labkit")
    app, warnings = build(src)
    yield src, app, warnings


def test_another_chapters_page_shows_it_and_the_lab_links_there(borrow_book) -> None:  # type: ignore[no-untyped-def]
    src, app, warnings = borrow_book
    assert "borrows.md" not in warnings
    html = page(app, "ch/borrows")
    # ch2/index, a chapter page after it; not labcode.md or shown.md, outside the chapters
    assert (
        'shown on: <a class="reference external" href="../ch2/index.html">double (ch2/index)</a>'
        in html
    )
    runnable = (Path(app.outdir) / "_labs" / "ch" / "borrows.py").read_text()
    assert "#   double: ch2/index.md, line 5" in runnable


def test_a_later_page_of_the_same_chapter_does_not_count(borrow_book) -> None:  # type: ignore[no-untyped-def]
    _, _, warnings = borrow_book
    assert 'early.md:6: ERROR: lab "Uses what a later page shows" imports TRIPLE' in warnings
    assert "late.md" not in warnings  # it shows what it uses


def test_the_chapter_index_may_preview_its_pages(borrow_book) -> None:  # type: ignore[no-untyped-def]
    src, app, warnings = borrow_book
    assert "ch/index.md" not in warnings
    assert "TRIPLE (ch/late)" in page(app, "ch/index")


def test_the_root_pages_rule_is_unchanged(borrow_book) -> None:  # type: ignore[no-untyped-def]
    """unshown.md is outside the chapters: though labcode.md, before it, shows double, it must
    show what it uses."""
    _, _, warnings = borrow_book
    assert 'unshown.md:6: ERROR: lab "Uses a taught name it does not show"' in warnings
