"""Code that fits the column at 1280 px: a long line wraps with a hanging indent instead of
scrolling its block sideways, line numbers stay on their lines, and copying gives the code's
lines back unchanged (issue 44)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from atlas.assets.codelines import wrap_code_lines
from tinybook import build_book, launch

LONG = "total = " + " + ".join(f"weight_{i} * activation_{i}" for i in range(12))
PAGE = f"""# Code

```{{code-block}} python
:linenos:
:lineno-start: 41

def f():
    {LONG}
    return total
```
"""


def test_lines_are_wrapped_once_and_keep_their_markup() -> None:
    body = '<div class="highlight"><pre><span></span><span class="k">a</span>\n\nb\n</pre></div>'
    once = wrap_code_lines(body)
    assert once == (
        '<div class="highlight"><pre><span class="atlas-codeline"><span></span>'
        '<span class="k">a</span></span>\n<span class="atlas-codeline">&#8203;</span>\n'
        '<span class="atlas-codeline">b</span>\n</pre></div>'
    )
    assert wrap_code_lines(once) == once  # a page written twice is wrapped once
    highlighted = '<div class="highlight"><pre><span class="hll">x = 1\n</span>y\n</pre></div>'
    assert wrap_code_lines(highlighted) == (
        '<div class="highlight"><pre><span class="atlas-codeline"><span class="hll">x = 1</span>'
        '</span>\n<span class="atlas-codeline">y</span>\n</pre></div>'
    )


@pytest.mark.browser
def test_a_long_line_wraps_without_sideways_scroll_and_numbers_stay(tmp_path: Path) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    html, _ = build_book(tmp_path / "book", {"index.md": PAGE})
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.goto((html / "index.html").as_uri())
            found = page.evaluate(
                "(() => { const pre = document.querySelector('div.highlight pre');"
                " const lines = [...pre.querySelectorAll(':scope > .atlas-codeline')];"
                " return {scrolls: pre.scrollWidth > pre.clientWidth + 1,"
                " numbers: lines.map(l => l.querySelector('.linenos')?.textContent.trim()),"
                " tall: lines[1].getBoundingClientRect().height"
                "   > 1.5 * lines[0].getBoundingClientRect().height,"
                " text: pre.innerText}; })()"
            )
        finally:
            browser.close()
    assert not found["scrolls"]
    assert found["numbers"] == ["41", "42", "43"]
    assert found["tall"]  # the long line wrapped onto more than one line
    assert LONG in found["text"].replace("\n", "") and found["text"].count("\n") <= 3
