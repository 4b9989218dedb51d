"""The commands' scan of the pages (atlas.upstream.citations) reads MyST as Sphinx does, with
MyST's own parser: what it finds is what the build renders, at the same lines."""

from __future__ import annotations

from atlas.upstream.citations import scan_markdown

PAGE = """\
# Page

% a comment shows the role: {upstream}`demo pkg/a.py:1`

Text with {upstream}`demo pkg/b.py:2` and, on the next line,
{upstream}`demo pkg/c.py:3`.

:::{note}
In a note: {upstream}`demo pkg/d.py:4`
:::

```{upstream} demo pkg/e.py:5-9
:dedent:
:contains: "quoted text"
```

```python
{upstream}`demo not/a/citation.py:1`
```

> ```{upstream} demo pkg/f.py:6
> ```
"""


def test_roles_fences_and_their_lines_are_found_as_myst_reads_them() -> None:
    sites = scan_markdown(PAGE, "p.md")
    assert [(s.line, s.kind, s.raw) for s in sites] == [
        (5, "role", "demo pkg/b.py:2"),
        (6, "role", "demo pkg/c.py:3"),
        (9, "role", "demo pkg/d.py:4"),
        (12, "directive", "demo pkg/e.py:5-9"),
        (21, "directive", "demo pkg/f.py:6"),
    ]


def test_options_are_the_values_the_directive_gets() -> None:
    """MyST reads option values as YAML: the quotes around a value are not part of it (the
    regular expressions this scan used before kept them, unlike the build)."""
    fence = next(s for s in scan_markdown(PAGE, "p.md") if s.kind == "directive")
    assert fence.options == {"dedent": "", "contains": "quoted text"}
