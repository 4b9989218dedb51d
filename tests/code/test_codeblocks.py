"""The one renderer of selected code (atlas.code.codeblocks), on plain segments.

The upstream directive's output through it is pinned by tests/upstream/test_upstream_snapshots.py;
labcode's by tests/teach/test_teach.py."""

from __future__ import annotations

from atlas.code.codeblocks import code_blocks, elision
from atlas.code.select import Segment
from docutils import nodes


def seg(start: int, *lines: str) -> Segment:
    return Segment(start, tuple(lines))


def test_elision_names_the_lines_not_shown() -> None:
    assert elision(seg(1, "a", "b", "c"), seg(18, "r")) == "\u22ee 14 lines not shown (L4\u2013L17)"
    assert elision(seg(10, "a", "b"), seg(13, "d")) == "\u22ee 1 line not shown (L12)"
    assert elision(seg(1, "a"), seg(4, "d")) == "\u22ee 2 lines not shown (L2\u2013L3)"


def test_one_numbered_block_per_segment_with_an_elision_between() -> None:
    out = code_blocks(
        [seg(3, "x = 1", "y = 2"), seg(9, "z = 3")],
        language="python",
        emphasize=[4, 9, 20],
        kind="demo",
    )
    assert [type(node) for node in out] == [
        nodes.literal_block,
        nodes.paragraph,
        nodes.literal_block,
    ]
    first, gap, second = out
    assert first.astext() == "x = 1\ny = 2" and second.astext() == "z = 3"
    assert gap.astext() == "\u22ee 4 lines not shown (L5\u2013L8)"
    assert gap["classes"] == ["demo-elision"]
    assert first["classes"] == second["classes"] == ["demo-code"]
    for block in (first, second):
        assert (block["language"], block["linenos"], block["force"]) == ("python", True, True)
    # emphasis is given in file lines and becomes lines of each block; 20 is in neither
    assert first["highlight_args"] == {"linenostart": 3, "hl_lines": [2]}
    assert second["highlight_args"] == {"linenostart": 9, "hl_lines": [1]}


def test_no_emphasis_leaves_no_hl_lines_and_one_segment_no_elision() -> None:
    (block,) = code_blocks([seg(7, "pass")], language="text", kind="upstream")
    assert block["highlight_args"] == {"linenostart": 7}
