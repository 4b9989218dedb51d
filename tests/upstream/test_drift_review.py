"""After a bump, what was left behind: suggestions that pass their guards, a review queue that
survives the command, and ``review`` accepting or keeping (with the reason in the page)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from atlas.upstream import drift
from atlas.upstream.drift import review
from atlas.upstream.drift.queue import load_queue, queue_paths
from atlas.upstream.lock import load_lock
from gitfixtures import Commit, FixtureUpstream, git, make_book, make_repo

CALC_V1 = """def setup():
    a = 1
    return a


def compute(values):
    total = 0
    for v in values:
        total += v * 2
    return total
"""
# three lines above, and the loop's body edited: lines 6-10 become 9-13, one line differs
CALC_V2 = "import os\nimport sys\n\n" + CALC_V1.replace("v * 2", "v * 3")
SCHED = """class Scheduler:
    def __init__(self, blocks):
        self.blocks = blocks
        self.current = 0

    def next_block(self):
        self.current += 1
        return self.blocks[self.current - 1]
"""
# the scheduler's code moves into a new file among unrelated code (too little alike for git
# to call it a rename), with one line edited
GEMM = (
    "".join(f"CONSTANT_{n} = {n} * 1024\n" for n in range(30))
    + "\n\n"
    + SCHED.replace("self.current += 1", "self.current += 2")
)

PAGE = """# Page

The loop adds each value twice, as the next lines show.

```{upstream} up pkg/calc.py:6-10
:contains: for v in values
```

Here the factor itself is the point.

```{upstream} up pkg/calc.py:6-10
:contains: v * 2
```

The whole function reads:

```{upstream} up pkg/calc.py::compute
```

The scheduler hands out blocks one at a time.

```{upstream} up pkg/sched.py:1-8
:contains: def next_block
```
"""

pytestmark = pytest.mark.usefixtures("fixture_git_config")


@pytest.fixture
def up(tmp_path):
    return make_repo(
        tmp_path / "up",
        [
            Commit({"pkg/calc.py": CALC_V1, "pkg/sched.py": SCHED}),
            Commit({"pkg/calc.py": CALC_V2, "pkg/sched.py": None, "pkg/core/gemm.py": GEMM}),
        ],
    )


@pytest.fixture
def book(tmp_path, up) -> Path:
    v1, _ = up.commits
    return make_book(
        tmp_path / "book",
        {"source/index.md": PAGE},
        {"up": FixtureUpstream(up, pin=v1, url=up.url)},
    )


def run(book: Path, *argv: str) -> int:
    return drift.main([argv[0], "--root", str(book), *argv[1:]])


def suggestions(book: Path) -> dict[int, str | None]:
    queue = load_queue(book, "up")
    assert queue is not None
    return {e.line: e.suggestion for e in queue.entries}


def test_drift_writes_a_queue_with_suggestions_that_pass_their_guards(book, up, capsys) -> None:
    _, v2 = up.commits
    assert run(book, "drift", "up", v2) == 0
    err = capsys.readouterr().err
    assert "4 citation(s) to review, 3 with a suggestion" in err
    as_json, as_text = queue_paths(book, "up")
    data = json.loads(as_json.read_text())
    assert data["applied"] is False and data["new"] == v2
    assert suggestions(book) == {
        5: "up pkg/calc.py:9-13",  # renumbered by similarity; `for v in values` is there
        11: None,  # the best window no longer holds `v * 2`: nothing is offered
        17: "up pkg/calc.py::compute",  # the symbol by name (its text changed)
        22: "up pkg/core/gemm.py:33-40",  # followed into another file
    }
    entries = {e["line"]: e for e in data["entries"]}
    assert entries[5]["sentence"] == "The loop adds each value twice, as the next lines show."
    assert "-        total += v * 2" in entries[5]["diff"]
    assert "+        total += v * 3" in entries[5]["diff"]
    text = as_text.read_text()
    assert "source/index.md:22" in text and "up pkg/core/gemm.py:33-40" in text


def test_review_accepts_suggestions_and_keeps_the_rest_with_a_reason(book, up, capsys) -> None:
    v1, v2 = up.commits
    assert run(book, "bump", "up", v2) == 0
    assert "walk them with" in capsys.readouterr().err
    rc = review.main(
        ["review", "up", "--root", str(book), "--accept-all-suggestions",
         "--keep-rest", "the old factor of two is what this paragraph explains"]
    )  # fmt: skip
    assert rc == 0
    text = (book / "source/index.md").read_text()
    assert "```{upstream} up pkg/calc.py:9-13\n:contains: for v in values\n" in text
    assert "```{upstream} up pkg/calc.py::compute\n" in text
    assert "```{upstream} up pkg/core/gemm.py:33-40\n" in text
    assert (
        f"```{{upstream}} up@{v1[:10]} pkg/calc.py:6-10\n"
        ":behind: the old factor of two is what this paragraph explains\n:contains: v * 2\n"
    ) in text
    lock = load_lock(book)  # refreshed: the accepted citations at the new pin, the kept one
    assert f"up@{v2} pkg/calc.py:9-13" in lock
    assert f"up@{v2} pkg/core/gemm.py:33-40" in lock
    assert f"up@{v1} pkg/calc.py:6-10" in lock
    assert not any(k.startswith(f"up@{v1} pkg/sched.py") for k in lock)
    assert load_queue(book, "up").entries == []
    assert "1 kept with a reason" in capsys.readouterr().err


def test_review_skips_leave_the_queue_and_a_drift_queue_cannot_be_applied(book, up, capsys) -> None:
    _, v2 = up.commits
    run(book, "drift", "up", v2)
    assert review.main(["review", "up", "--root", str(book), "--accept-all-suggestions"]) == 2
    assert "bump it to" in capsys.readouterr().err
    run(book, "bump", "up", v2)
    before = (book / "source/index.md").read_text()
    answers = iter([("skip", ""), None])  # skip the first, then quit
    assert review.main(["review", "up", "--root", str(book)], ask=lambda e: next(answers)) == 0
    assert (book / "source/index.md").read_text() == before
    assert len(load_queue(book, "up").entries) == 4


def test_a_bump_leaves_the_gitlink_staged_and_the_queue_names_the_old_pin(book, up) -> None:
    v1, v2 = up.commits
    run(book, "bump", "up", v2)
    queue = load_queue(book, "up")
    assert queue.applied and queue.old == v1
    assert all(e.citation.startswith(f"up@{v1[:10]} ") for e in queue.entries)
    assert git(book, "ls-files", "-s", "upstreams/up").split()[1] == v2


def test_review_finds_a_citation_that_prose_edited_above_it_moved(book, up, capsys) -> None:
    _, v2 = up.commits
    run(book, "bump", "up", v2)
    page = book / "source/index.md"
    page.write_text(page.read_text().replace("# Page\n", "# Page\n\nA new paragraph.\n"))
    assert review.main(["review", "up", "--root", str(book), "--accept-all-suggestions"]) == 0
    text = page.read_text()
    assert "```{upstream} up pkg/core/gemm.py:33-40\n" in text
    assert "3 accepted, 0 kept with a reason, 1 skipped" in capsys.readouterr().err
