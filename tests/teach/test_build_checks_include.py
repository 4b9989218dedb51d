"""Errors name the file and line they are in: an included file, not the including page's name
with the included file's line; a duplicate problem label is one located error (issue 35)."""

from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path

from sphinx.testing.util import SphinxTestApp

PART = """Included text.

A missing key {cite:p}`nosuch2020key`.

```{lab} Unshown
>>> import os, atlas.labkit
>>> atlas.labkit.__path__.append(os.environ["ATLAS_TEST_LABKIT"])
>>> from atlas.labkit.demo.kernel import double
>>> double(1)
2
```

```{labcode} demo/nosuch.py::f
```

```{upstream} demo x.py
pasted code
```
"""
PROBLEM = (
    ":label: p-ok\n:topic: memory\n"
    ":difficulty: standard\n\nQ.\n\n:::{solution}\nA.\n\n```{lab} L\n>>> 1\n1\n```\n:::\n::::\n"
)


def build(rootdir: Path, tmp: Path, files: dict[str, str]) -> str:
    src = tmp / "book"
    shutil.copytree(rootdir / "test-teach", src)
    for name, text in files.items():
        (src / name).write_text(text)
    warnings = StringIO()
    app = SphinxTestApp(
        "html", srcdir=src, confoverrides={"atlas_labs_mode": "off"}, status=StringIO(),
        warning=warnings,
    )  # fmt: skip
    try:
        app.build()
    finally:
        app.cleanup()
    return warnings.getvalue()


def test_an_error_in_an_included_file_names_that_file_and_its_line(
    rootdir: Path, tmp_path: Path
) -> None:
    warnings = build(
        rootdir,
        tmp_path,
        {
            "ch/problems.md": "# Problems\n\nIntro.\n\n```{include} part.txt\n```\n",
            "ch/part.txt": PART,
        },
    )
    assert re.search(r"ch/part\.txt:3: ERROR: cited key 'nosuch2020key' is not in", warnings)
    assert re.search(r'ch/part\.txt:8: ERROR: lab "Unshown" imports double', warnings), warnings
    assert re.search(r"ch/part\.txt:13: ERROR: labcode 'demo/nosuch\.py::f'", warnings), warnings
    assert re.search(r"ch/part\.txt:16: ERROR: upstream citation 'demo x\.py'", warnings), warnings
    assert not re.search(r"problems\.md:\d+: ERROR", warnings), warnings


def test_a_label_used_twice_on_a_page_is_one_located_error(rootdir: Path, tmp_path: Path) -> None:
    warnings = build(
        rootdir,
        tmp_path,
        {
            "ch/problems.md": (
                f"# Problems\n\n::::{{problem}} Fine\n{PROBLEM}\n::::{{problem}} Twice\n{PROBLEM}"
            )
        },
    )
    errors = [line for line in warnings.splitlines() if "problems.md" in line]
    assert len(errors) == 1, warnings  # not a second, location-less "Duplicate ID"
    assert "Duplicate ID" not in warnings
    assert re.search(
        r'problems\.md:20: ERROR: problem "Twice": :label: p-ok is already used', errors[0]
    )
