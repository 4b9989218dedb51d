"""The problem bank filters in the browser, opened from disk (issue 43): the page embeds its
problems' data, so that choosing a chapter, a topic, a difficulty or the interview tag hides the
others with no server and no fetch, which file:// would refuse."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tinybook import build_book, launch

pytestmark = pytest.mark.browser


def problem(label: str, topic: str, difficulty: str, tags: str = "") -> str:
    extra = f":tags: {tags}\n" if tags else ""
    return (
        f"::::{{problem}} Problem {label}\n:label: {label}\n:topic: {topic}\n"
        f":difficulty: {difficulty}\n{extra}\nQ.\n\n"
        ":::{solution}\nA.\n\n```{lab} L\n>>> 1 + 1 == 2\nTrue\n```\n:::\n::::\n\n"
    )


PAGES = {
    "index.md": "# Book\n\n```{toctree}\nhpc/index\nserving/index\nproblems\n```\n",
    "hpc/index.md": "# HPC\n\n```{toctree}\nproblems\n```\n",
    "hpc/problems.md": "# Problems\n\n"
    + problem("hpc-a", "memory", "warm-up", "interview")
    + problem("hpc-b", "roofline", "hard"),
    "serving/index.md": "# Serving\n\n```{toctree}\nproblems\n```\n",
    "serving/problems.md": "# Problems\n\n"
    + problem("serving-a", "memory", "hard", "interview")
    + problem("serving-b", "serving", "standard"),
    "problems.md": "# Problem bank\n\n```{problem-index}\n```\n",
}


@pytest.fixture(scope="module")
def bank(tmp_path_factory) -> Path:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    html, warnings = build_book(
        tmp_path_factory.mktemp("bank") / "book", PAGES, "atlas_labs_mode = 'off'\n"
    )
    assert "ERROR" not in warnings, warnings
    return html / "problems.html"


def visible(page) -> list[str]:
    return page.eval_on_selector_all(
        ".atlas-problem-index > li", "items => items.filter(i => i.offsetParent).map(i => i.id)"
    )


def test_the_filter_works_from_disk(bank: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_context(offline=True).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(bank.as_uri())
            assert page.url.startswith("file://")
            page.wait_for_selector("#atlas-bank-filter", state="visible", timeout=20_000)
            everything = visible(page)
            shown = page.locator(".atlas-bank-shown")
            before = shown.inner_text()
            page.select_option("select[name=difficulty]", "hard")
            hard = visible(page)
            page.check("input[name=interview]")
            hard_interview = visible(page)
            after = shown.inner_text()
            page.select_option("select[name=difficulty]", "")
            page.select_option("select[name=chapter]", "hpc/index")
            hpc_interview = visible(page)
            serving_hidden = page.locator(".atlas-bank-chapter").nth(1).is_hidden()
            page.uncheck("input[name=interview]")
            page.select_option("select[name=chapter]", "")
            page.select_option("select[name=topic]", "memory")
            memory = visible(page)
        finally:
            browser.close()
    assert errors == []
    assert everything == ["bank-hpc-a", "bank-hpc-b", "bank-serving-a", "bank-serving-b"]
    assert before == "Showing 4 of 4 problems."
    assert hard == ["bank-hpc-b", "bank-serving-a"]
    assert hard_interview == ["bank-serving-a"] and after == "Showing 1 of 4 problems."
    assert hpc_interview == ["bank-hpc-a"] and serving_hidden  # a chapter with none is hidden
    assert memory == ["bank-hpc-a", "bank-serving-a"]
