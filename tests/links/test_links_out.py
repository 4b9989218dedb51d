"""Links out of every page (issue 44, item 1), from the one repository setting: furo's view and
edit buttons and footer icon, the prefilled "report a problem" issue, both PDFs and the clone
steps under each lab; with no address, only the PDFs and the clone steps, and no warning; a bad
address, one error at its line in conf.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from atlas.project.repository import Repository, address_problem, branch_problem
from bs4 import BeautifulSoup
from tinybook import CONF, build_book

URL = "https://github.com/example-org/atlas-book"
LAB = "```{lab} Adds two numbers\n>>> assert 1 + 1 == 2\n```\n"
PAGES = {
    "index.md": "# Book\n\n```{toctree}\nch/page\n```\n",
    "ch/page.md": "# Paged attention\n\nSome text.\n\n" + LAB,
}
QUIET = "atlas_labs_mode = 'off'\n"  # the lab box and its links, without running the lab


def soup(html: Path, name: str) -> BeautifulSoup:
    return BeautifulSoup((html / f"{name}.html").read_text(encoding="utf-8"), "html.parser")


def committed(src: Path) -> str:
    """Make ``src`` a git repository with one commit of the pages; its sha."""
    src.mkdir(parents=True)
    for name, text in PAGES.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=src, check=True)
    subprocess.run(["git", "add", "."], cwd=src, check=True)
    subprocess.run(["git", *ident, "commit", "-q", "-m", "pages"], cwd=src, check=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=src, check=True, capture_output=True, text=True
    ).stdout.strip()


def report_query(page: BeautifulSoup) -> dict[str, str]:
    link = page.select_one("a.atlas-report")
    assert link is not None
    parts = urlsplit(link["href"])
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == URL + "/issues/new"
    return {key: values[0] for key, values in parse_qs(parts.query).items()}


def test_with_the_address_every_link_out_is_there_and_points_at_the_page(
    tmp_path: Path, fixture_git_config: None
) -> None:
    src = tmp_path / "book"
    commit = committed(src)
    html, warnings = build_book(src, PAGES, QUIET + f"atlas_repository_url = {URL!r}\n")
    assert warnings == ""
    page = soup(html, "ch/page")
    assert page.select_one('a[rel="edit"]')["href"] == URL + "/edit/main/ch/page.md"
    buttons = [a["href"] for a in page.select(".content-icon-container a")]
    assert any(b.startswith(URL + "/blob/main/ch/page.md") for b in buttons), buttons  # view
    assert page.select_one("a.atlas-repository")["href"] == URL
    assert page.select_one("footer .icons a")["href"] == URL
    query = report_query(page)
    assert query["title"] == "Problem on page: Paged attention"
    assert "Source: ch/page.md" in query["body"]
    assert f"Book commit: {commit}" in query["body"]
    assert [a["href"] for a in page.select("a.atlas-pdf")] == ["../../pdf/atlas.pdf"]
    steps = page.select_one("p.atlas-run-at-home").get_text()
    assert f"git clone {URL}" in steps and "cd atlas-book" in steps and "make setup" in steps
    assert ".venv/bin/python page.py" in steps
    # the root page: the PDF one folder up, the edit link at its own path
    root = soup(html, "index")
    assert root.select_one('a[rel="edit"]')["href"] == URL + "/edit/main/index.md"
    assert [a["href"] for a in root.select("a.atlas-pdf")] == ["../pdf/atlas.pdf"]


def test_the_chinese_edition_links_out_in_its_own_words(tmp_path: Path) -> None:
    extra = (
        QUIET
        + f"atlas_repository_url = {URL!r}\n"
        + "language = 'zh_CN'\natlas_i18n_editions = {'zh_CN': 'zh'}\n"
    )
    html, warnings = build_book(tmp_path / "book", PAGES, extra)
    assert warnings == ""
    page = soup(html, "ch/page")
    edit = page.select_one('a[rel="edit"]')
    assert edit["href"] == URL + "/edit/main/ch/page.md" and edit["title"] == "编辑本页"
    assert page.select_one("a.atlas-report").get_text() == "报告本页的问题"
    query = report_query(page)
    assert query["title"] == "页面有误：Paged attention"
    assert "源文件：ch/page.md" in query["body"] and "本书的提交：未知" in query["body"]
    # zh pages sit in html/zh/: both PDFs are two folders up from a chapter's page
    pdfs = [(a["href"], a.get_text()) for a in page.select("a.atlas-pdf")]
    assert pdfs == [("../../../pdf/atlas.pdf", "English"), ("../../../pdf/atlas-zh.pdf", "中文")]
    assert "git clone " + URL in page.select_one("p.atlas-run-at-home").get_text()
    assert "在本地运行" in page.select_one("p.atlas-run-at-home").get_text()


def test_without_the_address_only_the_pdfs_and_the_clone_steps_and_no_warning(
    tmp_path: Path,
) -> None:
    html, warnings = build_book(tmp_path / "book", PAGES, QUIET)
    assert warnings == ""
    page = soup(html, "ch/page")
    assert page.select("a.atlas-pdf") and page.select_one("p.atlas-links-out") is not None
    assert page.select_one('a[rel="edit"]') is None
    assert page.select(".content-icon-container a") == []  # no view or edit button
    assert page.select_one("a.atlas-repository") is None
    assert page.select_one("a.atlas-report") is None
    assert page.select_one("footer .icons a") is None
    steps = page.select_one("p.atlas-run-at-home").get_text()
    assert "git clone <the book's repository address>" in steps and "make setup" in steps


def test_a_bad_address_is_one_error_at_its_line(tmp_path: Path) -> None:
    src = tmp_path / "book"
    src.mkdir()
    (src / "index.md").write_text("# Book\n", encoding="utf-8")
    bad = URL + "/blob/main/"
    (src / "conf.py").write_text(CONF + f"atlas_repository_url = {bad!r}\n", encoding="utf-8")
    env = {**os.environ, "ATLAS_BOOK_CONF": os.environ["ATLAS_BOOK_CONF"]}
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if "ERROR" in line]
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = CONF.count("\n") + 1
    assert errors == [
        f"{src / 'conf.py'}:{line}: ERROR: atlas_repository_url = {bad!r}: must be the "
        "repository's own address, https://github.com/OWNER/NAME, not a page in it; fix it there"
    ], errors


@pytest.mark.parametrize(
    "value",
    [
        "ftp://github.com/o/n",
        "http://github.com/o/n",
        "https://github.com/o",
        "https://github.com/o/n/tree/main",
        "https://gitlab.com/g/n/-/issues",
        "https://example.org/o/n",
        "https://github.com/o/n?tab=readme",
    ],
)
def test_the_address_rule_refuses_what_no_link_can_be_made_from(value: str) -> None:
    assert address_problem(value) is not None


def test_the_addresses_made_from_one_repository() -> None:
    assert address_problem(URL) is None and address_problem(URL + "/") is None
    assert address_problem("https://gitlab.com/group/sub/name") is None
    assert branch_problem("main") is None and branch_problem("a b") is not None
    hub = Repository(URL + "/", "main", "source/")
    assert hub.file("ext/x.py") == URL + "/blob/main/ext/x.py" and hub.name == "atlas-book"
    issue = urlsplit(hub.new_issue("T & U", "line 1\nline 2"))
    assert parse_qs(issue.query) == {"title": ["T & U"], "body": ["line 1\nline 2"]}
    lab = Repository("https://gitlab.com/g/n", "dev")
    assert lab.file("a.md") == "https://gitlab.com/g/n/-/blob/dev/a.md"
    assert lab.new_issue("T", "B").startswith("https://gitlab.com/g/n/-/issues/new?issue%5Btitle")
