"""Page rewriting for bump: only the citation text changes, whatever else is on the line."""

from __future__ import annotations

import pytest
from atlas.upstream.pagewriter import CitationEdit, PageEditError, rewrite_line, rewrite_pages


def test_one_pass_never_rewrites_a_rewritten_citation() -> None:
    # the new text of the first citation is the old text of the second: a naive sequence of
    # replacements would move the first one twice
    line = "See {upstream}`up a.py:1-2` then {upstream}`up a.py:3-4`.\n"
    new = rewrite_line(line, {"up a.py:1-2": "up a.py:3-4", "up a.py:3-4": "up a.py:5-6"})
    assert new == "See {upstream}`up a.py:3-4` then {upstream}`up a.py:5-6`.\n"


def test_a_longer_spec_sharing_a_prefix_is_left_alone() -> None:
    line = "{upstream}`up a.py:1-40` and {upstream}`up a.py:1-4`\n"
    assert rewrite_line(line, {"up a.py:1-4": "up a.py:2-5"}) == (
        "{upstream}`up a.py:1-40` and {upstream}`up a.py:2-5`\n"
    )


def test_missing_citation_is_an_error() -> None:
    with pytest.raises(PageEditError, match="no longer on this line"):
        rewrite_line("nothing here\n", {"up a.py:1": "up a.py:2"})


def test_pages_keep_their_line_endings_and_other_text(tmp_path) -> None:
    page = tmp_path / "source" / "p.md"
    page.parent.mkdir()
    text = "# T\r\n\r\n```{upstream} up a.py:10-12\r\n:emphasize-lines: 11\r\n"
    text += ":caption: x 11\r\n```\r\n"
    page.write_bytes(text.encode())
    edit = CitationEdit(
        "source/p.md", 3, "directive", "up a.py:10-12", "up a.py:20-22", {10: 20, 11: 21, 12: 22}
    )
    assert rewrite_pages(tmp_path, [edit]) == ["source/p.md"]
    assert page.read_bytes().decode() == text.replace("10-12", "20-22").replace(
        "lines: 11", "lines: 21"
    )
