"""The bibliography's rules and the chapter reference lists (atlas.refs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from atlas.refs import arxiv
from atlas.refs.bib import load


@pytest.mark.parametrize(
    ("ident", "ok"),
    [
        ("1909.08053", True),
        ("0704.0001", True),
        ("1412.9999", True),
        ("2104.04473", True),
        ("hep-th/9901001", True),
        ("math.GT/0309136", True),
        ("2104.4473", False),  # 5 digits since 1501
        ("1205.12345", False),  # 4 digits before 1501
        ("2013.00001", False),  # month 13
        ("0612.1234", False),  # new style starts in 0704
        ("hep-th/0801001", False),  # old style ends in 0703
        ("2104.04473v2", False),  # eprint carries no version
        ("arXiv:2104.04473", False),
    ],
)
def test_arxiv_identifiers(ident: str, ok: bool) -> None:
    assert (arxiv.id_problem(ident) is None) is ok


def test_paper_identity_matches_versions_pdf_and_doi_resolvers() -> None:
    same = {
        arxiv.paper_identity(u)
        for u in (
            "https://arxiv.org/abs/2104.04473",
            "http://arxiv.org/abs/2104.04473v3",
            "https://arxiv.org/pdf/2104.04473v1.pdf",
            "https://export.arxiv.org/abs/2104.04473",
        )
    }
    assert same == {"arxiv:2104.04473"}
    assert arxiv.paper_identity("https://dx.doi.org/10.1145/ABC") == arxiv.paper_identity(
        "https://doi.org/10.1145/abc"
    )
    assert arxiv.paper_identity("https://www.example.org/post/#x") == "url:example.org/post"
    assert arxiv.paper_identity("mailto:someone@example.org") is None


def test_the_real_bibliography_follows_every_rule(repo_root: Path) -> None:
    bib = load(repo_root / "source" / "references.bib")
    assert bib.problems == []
    assert len(bib.entries) >= 26
    for key in bib.entries:
        assert re.fullmatch(r"[a-z]+\d{4}[a-z0-9]+", key), key


def test_every_rule_is_reported_at_its_line(rootdir: Path) -> None:
    bib = load(rootdir / "test-refs-errors" / "refs.bib")
    found = {(p.line, p.message.split(":")[0]) for p in bib.problems}
    text = "\n".join(f"{p.line}: {p.message}" for p in bib.problems)
    assert (12, "entry 'nourl2020paper' has no url field") in found, text
    assert "22: entry 'badid2020paper': malformed arXiv eprint: '2013.0001' has month 13" in text
    assert "24: entry 'badid2020paper': malformed arXiv URL" in text
    assert "31: entry 'pdf2020paper': use the abs page without version" in text
    assert "url = {https://arxiv.org/abs/2002.00002}" in text
    assert "27: entry 'pdf2020paper': arXiv entry without eprint: add eprint = {2002.00002}" in text
    assert "34: key 'good2020paper' is already defined at line 3" in text
    assert len(bib.problems) == 6, text


@pytest.mark.sphinx("html", testroot="refs")
def test_chapters_list_their_own_works_and_cites_link_to_the_bibliography(app, warning) -> None:
    app.build()
    assert app.statuscode == 0
    assert warning.getvalue() == ""
    out = Path(app.outdir)
    training = (out / "training" / "index.html").read_text().lower()  # styles lower titles
    serving = (out / "serving" / "index.html").read_text().lower()
    full = (out / "bibliography.html").read_text()
    # the chapter lists hold exactly the works cited in the chapter's pages
    assert "first fixture paper" in training and "second fixture paper" in training
    assert "third fixture paper" not in training
    assert "third fixture paper" in serving and "second fixture paper" in serving
    assert "first fixture paper" not in serving
    # the full page holds every entry, uncited ones included, each with its link
    for url in (
        "https://arxiv.org/abs/1909.00001",
        "https://arxiv.org/abs/2101.00002",
        "https://doi.org/10.0000/fixture.3",
        "https://blog.example.invalid/posts/fixture",
    ):
        assert f'href="{url}"' in full
    # every citation, from any chapter, links into the one citation list
    zero = (out / "training" / "zero.html").read_text()
    assert re.search(r'href="\.\./bibliography\.html#id\d+"', zero)
    assert "Beta" in zero


@pytest.mark.sphinx("html", testroot="refs-errors")
def test_page_errors_name_page_line_and_fix(app, warning) -> None:
    app.build()
    text = warning.getvalue()
    assert re.search(
        r"index\.md:3: ERROR: cited key 'missing2020paper' is not in .*refs\.bib", text
    ), text
    assert re.search(
        r"index\.md:5: ERROR: raw link to a paper the bibliography holds "
        r"\(https://arxiv\.org/pdf/2001\.00001v2\): cite it instead, \{cite:p\}`good2020paper`",
        text,
    ), text
    assert re.search(r"index\.md:7: ERROR: malformed arXiv link .*has month 13", text), text
    assert re.search(r"refs\.bib:12: ERROR: entry 'nourl2020paper' has no url field", text), text
    assert "ERROR: key 'good2020paper' is already defined at line 3" in text
    assert re.search(
        r"second\.md:5: ERROR: a second citation list \(the book's is in index\).*"
        r"chapter-references",
        text,
    ), text
    assert "Traceback" not in text
    assert 'could not find bibtex key "missing2020paper"' not in text  # one error, not two


@pytest.mark.sphinx("html", testroot="refs")
def test_an_entry_without_url_fails_a_strict_build(make_app, app_params, tmp_path) -> None:
    args, kwargs = app_params
    bib = tmp_path / "broken.bib"
    bib.write_text(
        "@misc{lone2020paper,\n  author = {Lone, Lu},\n  title = {T},\n  year = {2020},\n}\n"
    )
    kwargs["confoverrides"] = {"bibtex_bibfiles": [str(bib)]}
    kwargs["warningiserror"] = True
    kwargs["freshenv"] = True
    app = make_app(*args, **kwargs)
    app.build()
    assert app.statuscode == 1  # as `make check` (-W) builds it
    assert "broken.bib:1: ERROR: entry 'lone2020paper' has no url field" in app.warning.getvalue()


def test_a_new_citation_updates_the_chapter_list_incrementally(make_app, rootdir, tmp_path) -> None:
    import shutil

    src = shutil.copytree(rootdir / "test-refs", tmp_path / "book")
    app = make_app("html", srcdir=src, freshenv=True)
    app.build()
    index = Path(app.outdir) / "serving" / "index.html"
    assert "first fixture paper" not in index.read_text().lower()
    page = src / "serving" / "cache.md"
    page.write_text(page.read_text() + "\nAnd now {cite:p}`alpha2019first` too.\n")
    again = make_app("html", srcdir=src)  # same outdir and environment: an incremental build
    again.build()
    assert "first fixture paper" in index.read_text().lower()
