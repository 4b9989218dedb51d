"""The bibliography lists each work once, under a key that follows the convention (issue 35)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from atlas.refs.bib import load
from atlas.refs.duplicates import KEY_CONVENTION


def test_a_work_under_two_keys_is_reported_at_the_second(rootdir: Path) -> None:
    bib = load(rootdir / "test-refs-works" / "refs.bib")
    text = "\n".join(f"{p.line}: {p.message}" for p in bib.problems)
    assert (
        "12: entry 'vaswani2017transformer' is the same work as 'vaswani2017attention' (line 3): "
        "both have the arXiv identifier 1706.03762" in text
    ), text
    # a DOI given as a field in one entry and as a resolver link in the other
    assert re.search(
        r"^28: entry 'rumelhart1986backprop' is the same work as 'rumelhart1986learning' "
        r"\(line 21\): both have the DOI 10\.1038/323533a0",
        text,
        re.M,
    ), text
    # the same title, whatever its braces and case
    assert "42: entry 'smith2021guide' is the same work as 'smith2020guide' (line 35)" in text


def test_a_key_off_the_convention_is_reported_with_the_key_it_should_have(rootdir: Path) -> None:
    bib = load(rootdir / "test-refs-works" / "refs.bib")
    text = "\n".join(f"{p.line}: {p.message}" for p in bib.problems)
    assert "49: key 'Shoeybi19' breaks the key convention" in text, text
    assert "rename it to 'shoeybi2019megatron', and its citations with it" in text, text
    assert "56: key 'megatron-lm' breaks the key convention" in text, text
    assert len(bib.problems) == 5, text


@pytest.mark.sphinx("html", testroot="refs-works")
def test_the_build_reports_each_at_the_bib_line_and_goes_on(app, warning) -> None:
    app.build()
    text = warning.getvalue()
    assert re.search(r"refs\.bib:12: ERROR: entry 'vaswani2017transformer' is the same", text)
    assert re.search(r"refs\.bib:49: ERROR: key 'Shoeybi19' breaks the key convention", text)
    assert "Traceback" not in text
    assert (Path(app.outdir) / "index.html").exists()  # the build went on
    assert app.statuscode == 1


def test_the_real_bibliography_has_each_work_once_under_conventional_keys(repo_root: Path) -> None:
    bib = load(repo_root / "source" / "references.bib")
    assert bib.problems == []
    assert all(KEY_CONVENTION.match(key) for key in bib.entries)
