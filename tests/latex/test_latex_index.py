"""The PDF's index of cited code is built from the structured attributes of each citation's
link, not from its rendered caption or URL: rewording the caption cannot empty the index."""

from __future__ import annotations

from atlas.code.select import Segment
from atlas.code.spec import parse_spec
from atlas.latex.index import citation_entry
from atlas.upstream.directive import citation_attributes
from atlas.upstream.registry import Upstream
from atlas.upstream.resolve import OK, Resolution
from docutils import nodes

SHA = "2f49c09d80faf5abb70634d3cccac23ea16a541a"
UP = Upstream("demo", "upstreams/demo", "https://github.com/fixture/demo", SHA)


def resolution(raw: str, **kwargs) -> Resolution:
    return Resolution(raw=raw, status=OK, spec=parse_spec(raw), upstream=UP, **kwargs)


def test_a_citation_at_a_commit_carries_name_path_commit_and_lines() -> None:
    res = resolution(
        "demo pkg/net.py:8-9,17-21",
        commit=SHA,
        segments=[Segment(8, ("a", "b")), Segment(17, ("c",) * 5)],
    )
    assert citation_attributes(res) == {
        "upstream": "demo",
        "upstream_path": "pkg/net.py",
        "upstream_commit": SHA,
        "upstream_lines": (8, 21),
    }
    whole = citation_attributes(resolution("demo pkg/net.py", commit=SHA))
    assert "upstream_lines" not in whole
    at_a_tag = citation_attributes(resolution("demo@v1 pkg/net.py:1-2"))  # objects absent
    assert "upstream_commit" not in at_a_tag


def test_the_index_entry_comes_from_the_attributes_whatever_the_caption_says() -> None:
    attributes = citation_attributes(resolution("demo pkg/net.py:8-9", commit=SHA))
    reworded = nodes.reference("", "Helper, as the demo wrote it", refuri="", **attributes)
    assert citation_entry(reworded) == "demo (upstream code); pkg/net.py"
    # a caption that merely looks like a citation is not one
    lookalike = nodes.reference(
        "", f"demo@{SHA[:8]} · pkg/net.py", refuri=f"https://github.com/f/d/blob/{SHA}/pkg/net.py"
    )
    assert citation_entry(lookalike) is None
    no_commit = nodes.reference("", "x", upstream="torch", upstream_path="torch/a.py")
    assert citation_entry(no_commit) is None  # a package upstream, cited at a version
