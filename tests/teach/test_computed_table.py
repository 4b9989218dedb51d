"""``computed-table``: registry figures as a real table, computed at build time; a wrong key,
function or format is one error at the directive's line (issue 44)."""

from __future__ import annotations

import re
from pathlib import Path

from tinybook import build_book

TABLE = """# Frontier

```{computed-table} checks/models/index.py::frontier_rows
:caption: Frontier models, from the registry
model | Model
total_b | Total (B) | .1f
kv_kib | KV per token (KiB) | .1f
```
"""
BROKEN = """# Broken

```{computed-table} checks/models/index.py::frontier_rows
model | Model
weight | Weight
```

```{computed-table} checks/models/index.py::no_such_rows
model | Model
```
"""


def build(tmp_path: Path, pages: dict[str, str]) -> tuple[Path, str]:
    toc = "".join(name.removesuffix(".md") + "\n" for name in pages)
    index = "# Book\n\n```{toctree}\n" + toc + "```\n"
    return build_book(tmp_path / "book", {"index.md": index, **pages})


def cells(row_html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td.*?</td>", row_html, re.S)]


def test_the_registry_becomes_a_table_with_a_caption_and_aligned_numbers(tmp_path: Path) -> None:
    html, warnings = build(tmp_path, {"frontier.md": TABLE})
    assert "ERROR" not in warnings, warnings
    page = (html / "frontier.html").read_text(encoding="utf-8")
    assert "Frontier models, from the registry" in page
    rows = {cells(r)[0]: cells(r)[1:] for r in re.findall(r"<tr.*?</tr>", page, re.S) if "<td" in r}
    # the figures the frontier lab prints (source/models/index.md), computed here at build time
    assert rows["deepseek-v3"] == ["671.0", "68.6"]
    assert rows["llama-3.1-8b"] == ["8.0", "128.0"]
    assert 'class="atlas-number' in page  # numbers right-aligned


def test_a_wrong_key_or_function_is_an_error_at_its_line(tmp_path: Path) -> None:
    _html, warnings = build(tmp_path, {"broken.md": BROKEN})
    assert re.search(r'broken\.md:3: ERROR: computed-table .*: a row has no key "weight"', warnings)
    assert re.search(
        r"broken\.md:8: ERROR: computed-table .*has no function no_such_rows", warnings
    )
    assert "Traceback" not in warnings
