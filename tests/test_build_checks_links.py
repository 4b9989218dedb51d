"""A renamed page: every link to its old name is reported in every build, and its old outputs
are removed (issue 35)."""

from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp


def build(src: Path, builder: str = "html") -> tuple[SphinxTestApp, str, str]:
    status, warnings = StringIO(), StringIO()
    app = SphinxTestApp(
        builder,
        srcdir=src,
        confoverrides={"atlas_labs_mode": "off"},
        status=status,
        warning=warnings,
    )
    try:
        app.build()
    finally:
        app.cleanup()
    return app, status.getvalue(), warnings.getvalue()


@pytest.fixture
def renamed(rootdir: Path, tmp_path: Path) -> tuple[Path, SphinxTestApp, str, str]:
    """The book built once, then ``old`` moved to ``guide/old`` and built incrementally."""
    src = Path(shutil.copytree(rootdir / "test-links", tmp_path / "book"))
    app, _, warnings = build(src)
    out = Path(app.outdir)
    assert warnings == "", warnings
    assert (out / "old.html").is_file() and (out / "_labs" / "old.py").is_file()
    (src / "old.md").rename(src / "guide" / "old.md")
    index = src / "index.md"
    index.write_text(index.read_text().replace("\nold\n", "\nguide/old\n"))
    app, status, warnings = build(src)
    return src, app, status, warnings


def test_every_link_to_the_old_name_is_reported(renamed) -> None:
    _, app, _, warnings = renamed
    found = re.findall(r"book/([\w/]+)\.md:(\d+): ERROR: link to page '([^']+)'", warnings)
    assert sorted(found) == [
        ("first", "3", "old"),
        ("guide/third", "3", "../old"),
        ("second", "5", "/old"),
    ], warnings
    assert "which does not exist (renamed or removed?): point it at the page's current name" in (
        warnings
    )
    assert "('guide/old'?)" in warnings
    assert re.search(
        r"guide/third\.md:3: WARNING: 'myst' cross-reference target not found", warnings
    )
    assert "unknown document" not in warnings  # one error per link, not two
    assert "Traceback" not in warnings


def test_a_build_that_reads_nothing_still_reports_them(renamed) -> None:
    src, _, _, _ = renamed
    _, status, warnings = build(src)
    assert "0 added, 0 changed, 0 removed" in status
    assert len(re.findall(r"ERROR: link to page", warnings)) == 3, warnings


def test_the_old_page_s_outputs_are_removed(renamed) -> None:
    _, app, status, _ = renamed
    out = Path(app.outdir)
    assert not (out / "old.html").exists()
    assert not (out / "_labs" / "old.py").exists()
    assert (out / "guide" / "old.html").is_file()
    assert (out / "_labs" / "guide" / "old.py").is_file()
    assert "removed old.html: its page old is gone" in status
    # the unchanged pages were written again: their links no longer point at the old page
    assert 'href="old.html"' not in (out / "first.html").read_text(encoding="utf-8")


def test_outputs_are_removed_when_another_builder_saw_the_removal(
    rootdir: Path, tmp_path: Path
) -> None:
    src = Path(shutil.copytree(rootdir / "test-links", tmp_path / "book"))
    app, _, _ = build(src)
    (src / "old.md").unlink()
    build(src, "text")  # the builders of one build folder share the environment
    assert (Path(app.outdir) / "old.html").is_file()
    app, _, _ = build(src)
    assert not (Path(app.outdir) / "old.html").exists()
    assert not (Path(app.outdir) / "_labs" / "old.py").exists()
