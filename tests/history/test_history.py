"""The changelog and the pages' last-change dates, from a small repository with known dates.

The repository's main line: day 1 adds pages a and b and an upstream's gitlink; day 2 rewrites
40 lines of a and fixes one line of b; day 3 merges a branch (made on day 2) that adds page c,
moves the pin and marks a translated. Each assertion is something a reader of the changelog
relies on: the days newest first, a page counted once on the day it came, a typo not called a
revision, a merge's work dated by the merge, a moved pin named with both commits.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gitfixtures import git
from tinybook import build_book

DAY = 86_400
T0 = 1_795_000_000  # 2026-11-18 (UTC), mid-morning


def at(day: int) -> dict[str, str]:
    date = f"{T0 + day * DAY} +0000"
    return {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}


def commit(repo: Path, day: int, message: str, *paths: str) -> None:
    git(repo, "add", "--", *paths)
    git(repo, "commit", "-q", "-m", message, env=at(day))


def lines(n: int, word: str) -> str:
    return "".join(f"{word} line {i}\n" for i in range(n))


def write(repo: Path, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text, encoding="utf-8")


PIN_1 = "1" * 40
PIN_2 = "2" * 40


def make_book(repo: Path) -> None:
    git(repo, "init", "-q")
    write(repo, "index.md", "# Book\n\n```{toctree}\na\nb\nc\nchangelog\n```\n")
    write(repo, "changelog.md", "# What's new\n\n```{changelog}\n```\n")
    write(repo, "a.md", "# Page A\n\n" + lines(50, "alpha"))
    write(repo, "b.md", "# Page B\n\n" + lines(10, "beta"))
    write(
        repo,
        ".gitmodules",
        '[submodule "foo"]\n\tpath = upstreams/foo\n\turl = https://github.com/example/foo.git\n',
    )
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{PIN_1},upstreams/foo")
    commit(
        repo, 1, "day 1: the first pages", "index.md", "changelog.md", "a.md", "b.md", ".gitmodules"
    )
    write(repo, "a.md", "# Page A\n\n" + lines(10, "alpha") + lines(40, "gamma"))
    write(repo, "b.md", "# Page B\n\n" + lines(9, "beta") + "beta line ten\n")
    commit(repo, 2, "day 2: a rewritten, a typo in b", "a.md", "b.md")
    git(repo, "checkout", "-q", "-b", "topic")
    write(repo, "c.md", "# Page C\n\n" + lines(5, "gamma"))
    commit(repo, 2, "topic: page c", "c.md")
    git(repo, "update-index", "--cacheinfo", f"160000,{PIN_2},upstreams/foo")
    write(repo, "locales/zh_CN/complete.toml", 'complete = [\n  "a",\n]\n')
    commit(repo, 2, "topic: pin moved, a translated", "locales/zh_CN/complete.toml")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge topic", "topic", env=at(3))


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("history-book")
    make_book(repo)
    return repo


def test_days_newest_first_with_what_each_day_brought(book: Path) -> None:
    from atlas.history.events import Layout, PinMove, days
    from atlas.history.log import file_at, read_history

    history = read_history(book)
    found = days(
        history,
        Layout(source="", translated_file="locales/zh_CN/complete.toml"),
        lambda rev, path: file_at(book, rev, path),
    )
    assert [d.date for d in found] == ["2026-11-21", "2026-11-20", "2026-11-19"]
    day3, day2, day1 = found
    assert sorted(day1.added) == ["a", "b", "changelog", "index"]
    assert day1.pins == [PinMove("foo", None, PIN_1)]
    assert day2.revised == ["a"]  # b's one-line fix is not a revision
    assert day2.added == []  # c came with the merge, on day 3, not with the branch's commit
    assert day3.added == ["c"]
    assert day3.pins == [PinMove("foo", PIN_1, PIN_2)]
    assert day3.translated == ["a"]


def test_changelog_page_and_footer_in_html(book: Path) -> None:
    html, warnings = build_book(book, {})
    assert "WARNING" not in warnings and "ERROR" not in warnings, warnings
    page = (html / "changelog.html").read_text(encoding="utf-8")
    order = [page.index(f'rubric">{d}') for d in ("2026-11-21", "2026-11-20", "2026-11-19")]
    assert order == sorted(order)
    assert 'href="c.html"' in page and "Page C" in page  # a linked page, by its title
    assert "New pages</strong> (4)" in page  # day 1's four, counted
    assert "https://github.com/example/foo/compare/" + PIN_1 + "..." + PIN_2 in page
    a_page = (html / "a.html").read_text(encoding="utf-8")
    assert "Last changed on 2026-11-21" in a_page or "Last changed on 2026-11-20" in a_page
    b_page = (html / "b.html").read_text(encoding="utf-8")
    assert "Last changed on 2026-11-20" in b_page


def test_a_new_commit_reaches_the_changelog_on_the_next_build(book: Path) -> None:
    build_book(book, {})
    write(book, "d.md", "# Page D\n\n" + lines(3, "delta"))
    write(book, "index.md", "# Book\n\n```{toctree}\na\nb\nc\nd\nchangelog\n```\n")
    commit(book, 5, "day 5: page d", "d.md", "index.md")
    html, warnings = build_book(book, {})
    page = (html / "changelog.html").read_text(encoding="utf-8")
    assert "2026-11-23" in page and 'href="d.html"' in page, warnings


def test_outside_git_the_changelog_says_so(tmp_path: Path) -> None:
    html, warnings = build_book(
        tmp_path,
        {
            "index.md": "# Book\n\n```{toctree}\nchangelog\n```\n",
            "changelog.md": "# What's new\n\n```{changelog}\n```\n",
        },
    )
    assert "WARNING" not in warnings, warnings
    page = (html / "changelog.html").read_text(encoding="utf-8")
    assert "built outside its git repository" in page
    assert "Last changed on" not in page


def test_a_second_build_of_the_same_commit_rewrites_nothing(book: Path) -> None:
    pages = ("a", "b", "c", "changelog", "index")  # Sphinx rewrites search and genindex always
    html, _ = build_book(book, {})
    before = {p: (html / f"{p}.html").stat().st_mtime_ns for p in pages}
    html, _ = build_book(book, {})
    assert {p: (html / f"{p}.html").stat().st_mtime_ns for p in pages} == before
