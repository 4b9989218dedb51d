"""One permalink format, written and read in one module (atlas.upstream.permalink), and one
way of counting a file's lines for the citations and for the links to them."""

from __future__ import annotations

import pytest
from atlas.upstream.permalink import Permalink, build, fragment, parse
from atlas.upstream.registry import Upstream
from atlas.upstream.select import line_count, split_lines

SHA = "2f49c09d80faf5abb70634d3cccac23ea16a541a"


@pytest.mark.parametrize(
    ("path", "lines"),
    [
        ("megatron/core/x.py", (10, 40)),
        ("a.py", (7, 7)),
        ("docs/a b/ü#?.md", (1, 2)),  # quoted on the way out, unquoted on the way in
        ("README", None),
    ],
)
def test_parse_undoes_build(path: str, lines: tuple[int, int] | None) -> None:
    url = build("https://github.com/owner/repo", SHA, path, lines)
    assert parse(url) == Permalink("owner/repo", "blob", SHA, path, lines)


def test_the_fragment_names_one_line_or_a_range() -> None:
    assert build("https://github.com/o/r", SHA, "a.py", (7, 7)).endswith(f"{SHA}/a.py#L7")
    assert fragment((10, 40)) == "#L10-L40" and fragment(None) == ""


def test_the_registry_builds_its_permalinks_here() -> None:
    up = Upstream("demo", "upstreams/demo", "git@github.com:Owner/Repo.git", SHA)
    link = parse(up.permalink(SHA, "pkg/net.py", (8, 9)))
    assert link == Permalink("Owner/Repo", "blob", SHA, "pkg/net.py", (8, 9))


def test_parse_reads_what_github_links_hold() -> None:
    upper = parse(f"https://github.com/o/r/blob/{SHA.upper()}/a.py#L3C5-L9C2")
    assert upper is not None and upper.commit == SHA and upper.lines == (3, 9)
    assert parse(f"https://github.com/o/r/tree/{SHA}/src/").kind == "tree"
    heading = parse(f"https://github.com/o/r/blob/{SHA}/README.md#usage")
    assert heading is not None and heading.lines is None
    tag = parse("https://github.com/o/r/blob/v2.13.0/torch/a.py#L1")
    assert tag is not None and tag.rev == "v2.13.0" and tag.commit is None
    assert parse("https://github.com/o/r/issues/1") is None
    assert parse(f"https://gitlab.com/o/r/blob/{SHA}/a.py") is None


@pytest.mark.parametrize(
    "data",
    [b"", b"a", b"a\n", b"a\nb", b"a\nb\n", b"a\r\nb\r\n", b"a\rb\n", b"\n\n", b"\xff\xfe\nx"],
)
def test_line_count_numbers_lines_as_the_citations_do(data: bytes) -> None:
    expected = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    assert line_count(data) == expected
    if data:
        text = data.decode("utf-8", errors="replace")
        assert line_count(data) == len(split_lines(text))
