"""carry(): one citation taken from the old text of its file to the new one, on plain strings.

No git and no Sphinx: each verdict ``carry`` can return (unchanged, moved, changed, gone), for
each kind of selector (line ranges, the whole file, a symbol), with the exact messages and line
maps that ``drift`` prints and ``bump`` writes.
"""

from __future__ import annotations

import pytest
from atlas.upstream.drift.carry import MAX_DIFF_LINES, FileAt, Verdict, carry, diff_excerpt
from atlas.upstream.linemap import Hunk

OLD = """import os


def one():
    x = 1
    y = 2
    return x + y


def two():
    a = 3
    b = 4
    return a * b
"""
# three lines inserted above one(): every line of the file moves down by 3
SHIFTED = OLD.replace("import os\n", "import os\nimport re\nimport sys\n\n")
# one line of two() edited, nothing moves
EDITED = OLD.replace("b = 4", "b = 5")


def at_old(text: str | None, path: str = "pkg/a.py") -> FileAt:
    return FileAt(path, "1111111111", text)


def at_new(text: str | None, path: str = "pkg/a.py") -> FileAt:
    return FileAt(path, "2222222222", text)


def no_diff(old: list[str], new: list[str]) -> list[Hunk] | None:
    raise AssertionError("the line diff is only asked for when a cited range's text changed")


# -- line ranges --------------------------------------------------------------------------------
def test_range_unchanged_when_the_file_is_the_same() -> None:
    verdict = carry("5-7", at_old(OLD), at_new(OLD), no_diff)
    assert verdict == Verdict("unchanged", "", "pkg/a.py", "5-7", {5: 5, 6: 6, 7: 7})
    assert verdict.carried


def test_range_unchanged_when_edits_are_below_it() -> None:
    verdict = carry("5-7", at_old(OLD), at_new(EDITED))
    assert (verdict.status, verdict.selector, verdict.linemap) == (
        "unchanged",
        "5-7",
        {5: 5, 6: 6, 7: 7},
    )


def test_range_moved_by_lines_inserted_above() -> None:
    verdict = carry("5-7", at_old(OLD), at_new(SHIFTED))
    assert verdict == Verdict("moved", "", "pkg/a.py", "8-10", {5: 8, 6: 9, 7: 10})


def test_several_ranges_and_single_lines_move_together() -> None:
    verdict = carry("4,6-7", at_old(OLD), at_new(SHIFTED))
    assert (verdict.status, verdict.selector) == ("moved", "7,9-10")
    assert verdict.linemap == {4: 7, 6: 9, 7: 10}


def test_range_moved_with_its_renamed_file() -> None:
    verdict = carry("5-7", at_old(OLD), at_new(OLD, "pkg/sub/a2.py"), no_diff)
    assert verdict == Verdict("moved", "", "pkg/sub/a2.py", "5-7", {5: 5, 6: 6, 7: 7})


def test_range_changed_shows_the_diff_numbered_as_in_the_files() -> None:
    verdict = carry("12-13", at_old(OLD), at_new(EDITED.replace("import os\n", "import os\n\n")))
    assert verdict.status == "changed" and not verdict.carried
    assert verdict.detail.splitlines() == [
        "--- pkg/a.py:12-13@1111111111",
        "+++ pkg/a.py:13-14@2222222222",
        "@@ -12,2 +13,2 @@",
        "-    b = 4",
        "+    b = 5",
        "     return a * b",
    ]
    assert verdict.path is None and verdict.selector is None


def test_one_changed_range_leaves_the_whole_citation_behind_with_no_line_map() -> None:
    # 5-7 alone would move to 8-10; a citation left at the old pin keeps its old numbering,
    # so nothing (its :emphasize-lines: included) may be renumbered
    verdict = carry("5-7,12-13", at_old(OLD), at_new(SHIFTED.replace("b = 4", "b = 5")))
    assert verdict.status == "changed"
    assert verdict.linemap == {}
    assert "--- pkg/a.py:12-13@1111111111" in verdict.detail
    assert "pkg/a.py:5-7" not in verdict.detail  # only the range that changed is shown


def test_range_past_the_end_of_the_old_file_is_gone() -> None:
    assert carry("13", at_old(OLD), at_new(OLD), no_diff).status == "unchanged"  # the last line
    verdict = carry("1-2,13-14", at_old(OLD), at_new(OLD), no_diff)
    assert verdict == Verdict(
        "gone",
        "pkg/a.py has 13 lines at the old pin; the range 13-14 does not resolve there",
    )


def test_the_injected_line_diff_is_used_and_none_means_changed() -> None:
    # plan passes git's diff; git answers None for binary content: nothing can be carried
    def binary(old: list[str], new: list[str]) -> list[Hunk] | None:
        return None

    untouched = carry("1-2", at_old(OLD), at_new(EDITED), binary)
    assert untouched == Verdict("changed", "")  # not carried, though the lines read the same
    edited = carry("12-13", at_old(OLD), at_new(EDITED), binary)
    assert edited.status == "changed"
    assert edited.detail.startswith("--- pkg/a.py:12-13@1111111111\n+++ pkg/a.py:12-13@2222222222")


def test_a_selector_written_differently_is_rewritten_as_moved() -> None:
    # the text is where it was, but the page's 5-5 becomes the canonical 5
    verdict = carry("5-5", at_old(OLD), at_new(OLD), no_diff)
    assert (verdict.status, verdict.selector) == ("moved", "5")


# -- the whole file -----------------------------------------------------------------------------
def test_whole_file_unchanged_moved_and_changed() -> None:
    assert carry(None, at_old(OLD), at_new(OLD), no_diff) == Verdict(
        "unchanged", "", "pkg/a.py", None, {}
    )
    assert carry(None, at_old(OLD), at_new(OLD, "pkg/b.py"), no_diff) == Verdict(
        "moved", "", "pkg/b.py", None, {}
    )
    changed = carry(None, at_old(OLD), at_new(EDITED), no_diff)
    assert changed.status == "changed"
    assert changed.detail.splitlines()[:3] == [
        "--- pkg/a.py@1111111111",
        "+++ pkg/a.py@2222222222",
        "@@ -10,4 +10,4 @@",
    ]


# -- symbols ------------------------------------------------------------------------------------
def test_symbol_unchanged() -> None:
    other_edited = OLD.replace("y = 2", "y = 0")  # one() changed, two() did not move
    verdict = carry("::two", at_old(OLD), at_new(other_edited), no_diff)
    assert verdict == Verdict(
        "unchanged", "", "pkg/a.py", "::two", {10: 10, 11: 11, 12: 12, 13: 13}
    )


def test_symbol_moved_says_where_it_went() -> None:
    verdict = carry("::one", at_old(OLD), at_new(SHIFTED), no_diff)
    assert verdict == Verdict(
        "moved", "lines 4-7 -> 7-10", "pkg/a.py", "::one", {4: 7, 5: 8, 6: 9, 7: 10}
    )


def test_symbol_in_a_renamed_file_is_moved_without_detail() -> None:
    verdict = carry("::one", at_old(OLD), at_new(SHIFTED, "pkg/b.py"), no_diff)
    assert (verdict.status, verdict.detail, verdict.path) == ("moved", "", "pkg/b.py")


def test_symbol_whose_body_changed() -> None:
    verdict = carry("::two", at_old(OLD), at_new(EDITED), no_diff)
    assert verdict.status == "changed"
    assert verdict.detail.splitlines() == [
        "--- pkg/a.py@1111111111",
        "+++ pkg/a.py@2222222222",
        "@@ -10,4 +10,4 @@",
        " def two():",
        "     a = 3",
        "-    b = 4",
        "+    b = 5",
        "     return a * b",
    ]


def test_symbol_gone_at_either_pin() -> None:
    assert carry("::three", at_old(OLD), at_new(OLD), no_diff) == Verdict(
        "gone", "::three is not in pkg/a.py at the old pin"
    )
    removed = OLD.replace("def one():", "def uno():")
    assert carry("::one", at_old(OLD), at_new(removed, "pkg/b.py"), no_diff) == Verdict(
        "gone", "::one is no longer in pkg/b.py@2222222222"
    )


# -- the file itself ----------------------------------------------------------------------------
@pytest.mark.parametrize("selector", ["5-7", None, "::one"])
def test_file_missing_at_the_old_pin_or_deleted(selector: str | None) -> None:
    assert carry(selector, at_old(None), at_new(OLD), no_diff) == Verdict(
        "gone", "pkg/a.py does not exist at the old pin 1111111111"
    )
    assert carry(selector, at_old(OLD), at_new(None), no_diff) == Verdict(
        "gone", "pkg/a.py was deleted between 1111111111 and 2222222222"
    )


def test_crlf_and_undecodable_text_count_lines_as_github_does() -> None:
    old = "a = 1\r\nb = 2\r\n\udcff = 3\n"
    verdict = carry("2-3", at_old(old), at_new("x = 0\n" + old))
    assert (verdict.status, verdict.selector) == ("moved", "3-4")


# -- the diff shown to a human ------------------------------------------------------------------
def test_diff_excerpt_is_cut_to_a_readable_size() -> None:
    old = [f"old {n}" for n in range(100)]
    new = [f"new {n}" for n in range(100)]
    lines = diff_excerpt(old, new, "a", "b", 1, 1).splitlines()
    assert len(lines) == MAX_DIFF_LINES + 1
    assert lines[-1] == f"... ({3 + 200 - MAX_DIFF_LINES} more diff lines)"
