"""Labs that read upstream code are part of the drift: ``drift NAME REV`` lists them, and
``--labs`` runs them with the upstream read at REV, so a broken loader is seen before a bump."""

from __future__ import annotations

from pathlib import Path

import pytest
from atlas.labs.drift import page_labs
from atlas.upstream import drift
from gitfixtures import Commit, FixtureUpstream, make_book, make_repo

pytestmark = pytest.mark.usefixtures("fixture_git_config")


def lab_page(book: Path) -> str:
    return f"""# Page

```{{upstream}} tool pkg/other.py:1
```

```{{lab}} The value the loader reads
:timeout: 60

>>> from pathlib import Path
>>> from atlas.labkit.pinned import pinned
>>> pinned("tool", Path({str(book)!r})).read_text("pkg/value.py")
'VALUE = 1\\n'
```

```{{lab}} Reads nothing upstream

>>> 1 + 1
2
```
"""


@pytest.fixture
def book(tmp_path):
    up = make_repo(
        tmp_path / "up",
        [
            Commit({"pkg/value.py": "VALUE = 1\n", "pkg/other.py": "x = 1\n"}),
            Commit({"pkg/value.py": "VALUE = 2\n"}),
        ],
    )
    root = tmp_path / "book"
    book = make_book(
        root,
        {
            "source/index.md": lab_page(root),
            # the labkit names the files labs read, so drift fetches them at REV
            "ext/atlas/labkit/reader.py": 'VALUE_FILE = "pkg/value.py"\n',
        },
        {"tool": FixtureUpstream(up, pin=up.commits[0], url=up.url)},
    )
    return book, up


def test_page_labs_reads_lab_blocks_like_the_directive(tmp_path) -> None:
    specs = page_labs("source/index.md", lab_page(tmp_path))
    assert [s.title for s in specs] == ["The value the loader reads", "Reads nothing upstream"]
    assert specs[0].timeout == 60.0 and specs[0].start_line == 6
    assert len(specs[0].examples) == 3


def test_drift_lists_the_labs_and_runs_them_at_rev(book, capsys) -> None:
    root, up = book
    v2 = up.commits[1]
    assert drift.main(["drift", "--root", str(root), "tool", v2]) == 0
    err = capsys.readouterr().err
    assert "2 lab(s) on 1 page(s) read tool:" in err and "source/index.md: 2 lab(s)" in err
    assert drift.main(["drift", "--root", str(root), "tool", v2, "--labs"]) == 1
    err = capsys.readouterr().err
    assert "failed   source/index.md: The value the loader reads" in err
    assert "VALUE = 2" in err  # what the lab read at REV
    assert "passed   source/index.md: Reads nothing upstream" in err
    assert "1 passed, 1 not" in err
    assert drift.main(["drift", "--root", str(root), "tool", up.commits[0], "--labs"]) == 0
