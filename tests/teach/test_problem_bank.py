"""The problem bank's tags (issue 43): every problem states its difficulty (a missing or unknown
one is an error at the problem's line, naming the allowed values), may carry tags from a fixed
list, shows both as badges, and the bank counts them; the PDF has the counts, not the filter."""

from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path

from sphinx.testing.util import SphinxTestApp

LAB = ":::{solution}\nA.\n\n```{lab} L\n>>> 1\n1\n```\n:::\n::::\n\n"


def build(rootdir: Path, tmp: Path, builder: str = "html", page: str | None = None):
    """The test-teach book (its ``ch/problems.md`` replaced by ``page`` if given), labs off."""
    src = shutil.copytree(rootdir / "test-teach", tmp / "book")
    if page is not None:
        (src / "ch" / "problems.md").write_text(page, encoding="utf-8")
    warnings = StringIO()
    app = SphinxTestApp(
        builder, srcdir=src, confoverrides={"atlas_labs_mode": "off"}, status=StringIO(),
        warning=warnings,
    )  # fmt: skip
    try:
        app.build()
    finally:
        app.cleanup()
    return Path(app.outdir), warnings.getvalue()


def test_a_missing_or_unknown_difficulty_is_an_error_at_its_line(
    rootdir: Path, tmp_path: Path
) -> None:
    _, warnings = build(
        rootdir,
        tmp_path,
        page=(
            "# Problems\n\n"
            "::::{problem} Unrated\n:label: p-unrated\n:topic: cost\n\nQ.\n\n"
            + LAB  # line 3
            + "::::{problem} Medium\n:label: p-medium\n:topic: cost\n:difficulty: medium\n\nQ.\n\n"
            + LAB  # line 19
            + "::::{problem} Odd tag\n:label: p-tag\n:topic: cost\n:difficulty: hard\n"
            ":tags: interview, trivia\n\nQ.\n\n"
            + LAB  # line 36
            + "::::{problem} Fine\n:label: p-fine\n:topic: cost\n:difficulty: warm-up\n"
            ":tags: interview\n\nQ.\n\n" + LAB  # line 54
        ),
    )
    allowed = "one of warm-up, standard, hard"
    assert re.search(
        rf'problems\.md:3: ERROR: problem "Unrated" has no :difficulty:, give {allowed}', warnings
    ), warnings
    assert re.search(
        rf"problems\.md:19: ERROR: problem \"Medium\" :difficulty: 'medium' is not {allowed}",
        warnings,
    ), warnings
    assert re.search(
        r'problems\.md:36: ERROR: problem "Odd tag": unknown :tags: trivia; the tags are '
        r"interview",
        warnings,
    ), warnings
    assert "p-fine" not in warnings and '"Fine"' not in warnings
    assert "Traceback" not in warnings


def test_badges_and_counts_in_html(rootdir: Path, tmp_path: Path) -> None:
    html, warnings = build(rootdir, tmp_path)
    problems = (html / "ch" / "problems.html").read_text(encoding="utf-8")
    assert '<span class="atlas-badge atlas-badge-warm-up">warm-up</span>' in problems
    assert '<span class="atlas-badge atlas-badge-tag">interview</span>' in problems
    assert '<span class="atlas-badge atlas-badge-standard">standard</span>' in problems
    bank = (html / "bank.html").read_text(encoding="utf-8")
    assert "2 problems in 1 chapter." in bank
    assert "By difficulty: 1 warm-up, 1 standard, 0 hard; 1 tagged interview." in bank
    counts = re.search(r'<table class="[^"]*atlas-bank-counts.*?</table>', bank, re.S)
    assert counts is not None
    cells = re.findall(r"<td><p>([^<]*)</p></td>", counts.group(0))
    assert cells == ["A chapter", "2", "1", "1", "0", "1", "All", "2", "1", "1", "0", "1"]
    assert 'id="atlas-bank-filter"' in bank and 'id="atlas-bank-data"' in bank
    assert '<li id="bank-demo-double">' in bank
    assert "atlas-bank.js" in bank


def test_the_pdf_counts_and_groups_by_chapter_without_the_filter(
    rootdir: Path, tmp_path: Path
) -> None:
    out, _ = build(rootdir, tmp_path, "latex")
    tex = (out / "atlas.tex").read_text(encoding="utf-8")
    assert r"By difficulty: 1 warm\sphinxhyphen{}up, 1 standard, 0 hard; 1 tagged interview." in tex
    assert "atlas-bank-data" not in tex and "atlas-bank-filter" not in tex
    assert r"\begin{sphinxuseclass}{atlas-bank-chapter}" in tex
