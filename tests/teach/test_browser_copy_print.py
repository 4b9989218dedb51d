"""What a reader gets from a lab and a problem in the browser: the copy button copies the code
alone (no prompts, no output), and printing shows every collapsed solution (issue 44)."""

from __future__ import annotations

import shutil
from io import StringIO
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp
from tinybook import launch

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def problems_page(tmp_path_factory, rootdir: Path) -> Path:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    src = shutil.copytree(rootdir / "test-teach", tmp_path_factory.mktemp("teach") / "book")
    app = SphinxTestApp(
        "html", srcdir=src, confoverrides={"atlas_labs_mode": "off"}, status=StringIO(),
        warning=StringIO(),
    )  # fmt: skip
    try:
        app.build()
    finally:
        app.cleanup()
    return src / "_build" / "html" / "ch" / "problems.html"


def open_page(pw, page_file: Path):
    browser = launch(pw)
    page = browser.new_context(offline=True).new_page()
    page.goto(page_file.as_uri())
    return browser, page


def test_the_copy_button_copies_a_labs_code_without_prompts_or_output(problems_page) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser, page = open_page(pw, problems_page)
        try:
            page.evaluate(
                "document.addEventListener('copy', e => {"
                " window.atlasCopied = e.target.value ?? String(document.getSelection()); })"
            )
            page.locator("details.sd-dropdown summary").first.click()  # open the solution
            button = page.locator(".atlas-lab button.copybtn").first
            button.wait_for(state="attached", timeout=20_000)
            button.click(force=True)
            page.wait_for_function("window.atlasCopied !== undefined", timeout=20_000)
            copied = page.evaluate("window.atlasCopied")
        finally:
            browser.close()
    assert copied.strip() == "21 + 21", copied  # the lab is ">>> 21 + 21" then "42"


def test_printing_shows_every_collapsed_solution(problems_page) -> None:
    from playwright.sync_api import sync_playwright

    answer = "text=Add 21 to itself."
    with sync_playwright() as pw:
        browser, page = open_page(pw, problems_page)
        try:
            assert not page.locator(answer).is_visible()  # collapsed on screen
            page.emulate_media(media="print")  # the stylesheet alone opens it
            printed_by_css = page.locator(answer).is_visible()
            page.emulate_media(media="screen")
            page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
            opened = page.evaluate("[...document.querySelectorAll('details')].every(d => d.open)")
            page.evaluate("window.dispatchEvent(new Event('afterprint'))")
            closed = page.evaluate("[...document.querySelectorAll('details')].every(d => !d.open)")
        finally:
            browser.close()
    assert printed_by_css
    assert opened and closed  # printing opens them all, and closes again those it opened
