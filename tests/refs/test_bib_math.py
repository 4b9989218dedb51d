"""Math in a bibliography title is rejected at its entry (the style would print it literally,
lowercased), and the build fails on it, -W or not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from atlas.refs.bib import load

REPO = Path(__file__).resolve().parents[2]
BIB = """\
@misc{fast2020attention,
  author = {Fast, Flo},
  title  = {Attention in $O(n^2)$ Time},
  year   = {2020},
  url    = {https://example.org/fast},
}

@misc{doi2021only,
  author = {Doi, Dee},
  title  = {A Paper With a {DOI} and No URL},
  year   = {2021},
  doi    = {10.1000/xyz123},
}
"""
MESSAGE = (
    "entry 'fast2020attention': title has TeX math '$O(n^2)$', which the bibliography prints "
    "as literal, lowercased text: write it in words or Unicode, braced to keep its case "
    "(e.g. {O(n²)} for $O(n^2)$)"
)


def test_math_in_a_title_is_a_problem_at_its_line(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB)
    problems = load(bib).problems
    assert [(p.line, p.message) for p in problems] == [(3, MESSAGE)]  # the DOI entry is fine


def test_the_build_fails_at_the_entry(tmp_path: Path) -> None:
    book = tmp_path / "book"
    book.mkdir()
    (book / "refs.bib").write_text(BIB)
    (book / "conf.py").write_text(
        "import os, runpy\n"
        "globals().update({k: v for k, v in runpy.run_path(os.environ['ATLAS_BOOK_CONF'])"
        ".items() if k[:2] != '__'})\n"
        "bibtex_bibfiles = ['refs.bib']\n"
    )
    (book / "index.md").write_text("# P\n\nSee {cite:t}`fast2020attention`.\n")
    (book / "bibliography.md").write_text("# B\n\n```{bibliography}\n```\n")
    env = dict(os.environ)  # ATLAS_BOOK_CONF: the fixtures' settings (conftest.py)
    cmd = [sys.executable, "-m", "sphinx", "-M", "html", str(book), str(book / "_build"), "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert f"refs.bib:3: ERROR: {MESSAGE} [atlas.refs.bib]" in proc.stderr
    assert "Traceback" not in proc.stderr
