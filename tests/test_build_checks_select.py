"""``:start-after:`` and ``:end-before:`` in the wrong order say so (issue 35)."""

from __future__ import annotations

import pytest
from atlas.upstream.select import SelectError, apply_options, select
from atlas.upstream.spec import parse_spec

TEXT = "def f():\n    # begin\n    x = 1\n    # end\n    return x\n"


def sel(**options: str):
    return apply_options(select(TEXT, parse_spec("x f.py")), options)


def test_end_before_above_start_after_is_the_wrong_order() -> None:
    with pytest.raises(SelectError) as caught:
        sel(**{"start-after": "# end", "end-before": "# begin"})
    message = str(caught.value)
    assert ":end-before: '# begin' (line 2) comes before :start-after: '# end' (line 4)" in message
    assert "wrong order" in message
    assert "does not occur" not in message


def test_a_marker_that_really_is_missing_still_says_so() -> None:
    with pytest.raises(SelectError, match="it does not occur"):
        sel(**{"start-after": "# begin", "end-before": "# nowhere"})


def test_markers_in_the_right_order_select_between_them() -> None:
    segments = sel(**{"start-after": "# begin", "end-before": "# end"})
    assert [(s.start, s.lines) for s in segments] == [(3, ("    x = 1",))]
