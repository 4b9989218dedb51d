"""Line ranges carried through -U0 hunks: the edges where an off-by-one would hide."""

from __future__ import annotations

import subprocess

import pytest
from atlas.upstream.linemap import (
    Hunk,
    line_hunks,
    map_line,
    map_range,
    nearest_range,
    parse_hunks,
)

OLD = [f"line {n}" for n in range(1, 21)]


def hunks_between(tmp_path, old: list[str], new: list[str]) -> list[Hunk]:
    """The hunks git itself reports between two versions of a file."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("\n".join(old) + "\n")
    b.write_text("\n".join(new) + "\n")
    proc = subprocess.run(
        ["git", "diff", "--no-index", "-U0", "--no-color", str(a), str(b)],
        capture_output=True,
        check=False,
    )
    return parse_hunks(proc.stdout)


def check(tmp_path, new: list[str], start: int, end: int) -> tuple[int, int] | None:
    """map_range, asserted against the texts: a mapped range holds exactly the old lines."""
    hunks = hunks_between(tmp_path, OLD, new)
    mapped = map_range(hunks, start, end)
    if mapped is not None:
        assert new[mapped[0] - 1 : mapped[1]] == OLD[start - 1 : end]
    return mapped


@pytest.mark.parametrize(
    "edit, start, end, expected",
    [
        (lambda t: ["new a", "new b", *t], 5, 8, (7, 10)),  # inserted above
        (lambda t: [*t[:4], "new", *t[4:]], 5, 8, (6, 9)),  # inserted just above line 5
        (lambda t: [*t[:8], "new", *t[8:]], 5, 8, (5, 8)),  # inserted just below line 8
        (lambda t: [*t[:6], "new", *t[6:]], 5, 8, None),  # inserted between two cited lines
        (lambda t: t[2:], 5, 8, (3, 6)),  # deleted above
        (lambda t: [*t[:3], *t[4:]], 5, 8, (4, 7)),  # deleted line 4, right above
        (lambda t: [*t[:4], *t[5:]], 5, 8, None),  # deleted the first cited line
        (lambda t: [*t[:7], "edited", *t[8:]], 5, 8, None),  # edited the last cited line
        (lambda t: [*t[:15], "edited", *t[16:]], 5, 8, (5, 8)),  # edited far below
        (lambda t: ["x", *t[:10], *t[12:]], 5, 8, (6, 9)),  # edits on both sides
    ],
)
def test_map_range(tmp_path, edit, start: int, end: int, expected) -> None:
    assert check(tmp_path, edit(list(OLD)), start, end) == expected


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: ["new a", "new b", *t],  # inserted at the top
        lambda t: [*t[:6], "new", *t[6:]],  # inserted in the middle
        lambda t: [*t, "new"],  # appended
        lambda t: [*t[:4], *t[5:]],  # one line deleted
        lambda t: t[:-3],  # the end deleted
        lambda t: [*t[:7], "edited", *t[8:]],  # one line replaced
        lambda t: ["x", *t[:10], *t[12:]],  # edits on both sides
    ],
)
def test_line_hunks_are_the_hunks_git_reports(tmp_path, edit) -> None:
    new = edit(list(OLD))
    assert line_hunks(OLD, new) == hunks_between(tmp_path, OLD, new)


def test_map_line_and_nearest_range(tmp_path) -> None:
    new = ["top", *OLD[:6], "edited 7", *OLD[7:]]
    hunks = hunks_between(tmp_path, OLD, new)
    assert map_line(hunks, 6) == 7
    assert map_line(hunks, 7) is None
    assert map_line(hunks, 8) == 9
    # a changed range is shown against where its text went: lines 6-9 of the new file
    assert nearest_range(hunks, 5, 8, len(new)) == (6, 9)


def test_parse_hunks_default_counts() -> None:
    diff = b"@@ -3 +3,2 @@\n-a\n+b\n+c\n@@ -10,0 +12 @@\n+d\n"
    assert parse_hunks(diff) == [Hunk(3, 1, 3, 2), Hunk(10, 0, 12, 1)]
