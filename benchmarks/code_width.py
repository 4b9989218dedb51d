"""How many of the book's code blocks fit their column: every page of a built HTML folder is
opened in headless Chromium at 1280 px (and 390 px), and each highlighted block counts as
scrolling when its ``pre`` is wider than the box that shows it.

Target (issue 44): at least 95% of the blocks fit at 1280 px. The baseline is the same pages
with the book's wrapping switched off in the page (``atlas-code.css`` removed), measured in the
same run, so the figure says what the wrapping buys.

Run after ``make html``: ``.venv/bin/python benchmarks/code_width.py [_build/html]``. The last
line printed is one JSON object.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

COUNT = """(() => {
  const blocks = [...document.querySelectorAll('div.highlight pre')];
  return [blocks.length, blocks.filter(p => p.scrollWidth > p.clientWidth + 1).length];
})()"""
UNWRAP = """(() => {
  for (const link of document.querySelectorAll('link[href*="atlas-code.css"]')) link.remove();
})()"""


def measure(html: Path, width: int, unwrap: bool) -> tuple[int, int]:
    from playwright.sync_api import sync_playwright

    blocks = scrolling = 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=shutil.which("chromium"),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_context(offline=True, viewport={"width": width, "height": 900})
            page = page.new_page()
            for path in sorted(html.rglob("*.html")):
                if {"_static", "_labs", "_labkit", "zh"} & set(path.relative_to(html).parts):
                    continue
                page.goto(path.as_uri())
                if unwrap:
                    page.evaluate(UNWRAP)
                found, scrolls = page.evaluate(COUNT)
                blocks, scrolling = blocks + found, scrolling + scrolls
        finally:
            browser.close()
    return blocks, scrolling


def main() -> None:
    html = Path(sys.argv[1] if len(sys.argv) > 1 else "_build/html").resolve()
    result = {}
    for width in (1280, 390):
        blocks, wrapped = measure(html, width, unwrap=False)
        _, baseline = measure(html, width, unwrap=True)
        fits = 1 - wrapped / blocks if blocks else 1.0
        result[str(width)] = {
            "blocks": blocks,
            "scrolling": wrapped,
            "scrolling_without_wrapping": baseline,
            "fit": round(fits, 4),
        }
        print(f"{width} px: {blocks} blocks, {wrapped} scroll ({baseline} without wrapping)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
