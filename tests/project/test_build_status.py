"""Every target that runs labs or checks citations says the truth in its exit status."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def build(src: Path, out: Path, builder: str = "html", *options: str):
    """``sphinx-build -M BUILDER`` in a fresh process, as make runs it."""
    cmd = [sys.executable, "-m", "sphinx", "-M", builder, str(src), str(out), "-q", *options]
    env = dict(os.environ)  # ATLAS_BOOK_CONF: the fixtures' settings (conftest.py)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture
def failing_lab(tmp_path: Path, rootdir: Path) -> Path:
    return shutil.copytree(rootdir / "test-lab-fails", tmp_path / "book")


def test_a_failing_lab_fails_make_html_and_the_page_shows_it(failing_lab: Path) -> None:
    out = failing_lab / "_build"
    proc = build(failing_lab, out)
    assert proc.returncode == 1, proc.stderr
    assert 'index.md:4: ERROR: lab "Two and two" FAILED at example 1' in proc.stderr
    assert "1 lab(s) failed (each reported at its page and line)" in proc.stderr
    page = (out / "html" / "index.html").read_text(encoding="utf-8")
    assert "FAILED" in page and "printed something else" in page
    # a no-op rebuild (the result comes from the cache) fails the same way
    again = build(failing_lab, out)
    assert again.returncode == 1
    assert "1 lab(s) failed" in again.stderr


def test_a_failing_lab_fails_make_labs_check_and_the_latex_builder(failing_lab: Path) -> None:
    out = failing_lab / "_build"
    labs = build(failing_lab, out, "html", "-D", "atlas_labs_mode=force")
    assert labs.returncode == 1, labs.stderr
    strict = build(failing_lab, out, "html", "-W", "--keep-going", "-n")
    assert strict.returncode == 1
    latex = build(failing_lab, out, "latex")
    assert latex.returncode == 1, latex.stderr
    assert "1 lab(s) failed" in latex.stderr


def test_a_lab_failing_in_an_included_file_is_reported_at_that_file(failing_lab: Path) -> None:
    (failing_lab / "part.txt").write_text(
        "Included.\n\n```{lab} Three and three\n>>> 3 + 3\n7\n```\n", encoding="utf-8"
    )
    index = failing_lab / "index.md"
    index.write_text(
        index.read_text(encoding="utf-8") + "\n```{include} part.txt\n```\n", encoding="utf-8"
    )
    proc = build(failing_lab, failing_lab / "_build")
    assert proc.returncode == 1, proc.stderr
    assert 'part.txt:4: ERROR: lab "Three and three" FAILED at example 1' in proc.stderr
    assert 'index.md:4: ERROR: lab "Two and two" FAILED at example 1' in proc.stderr
    assert "2 lab(s) failed" in proc.stderr
