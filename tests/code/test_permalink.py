"""One permalink format, written and read in one module (atlas.code.permalink), and one
way of counting a file's lines for the citations and for the links to them."""

from __future__ import annotations

import pytest
from atlas.code.permalink import (
    Permalink,
    build,
    fragment,
    github_slug,
    is_commit,
    parse,
    web_url,
)
from atlas.code.select import line_count, split_lines
from atlas.upstream.packages.registry import PackageUpstream
from atlas.upstream.registry import Upstream

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


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/Org/Up.git",
        "https://github.com/Org/Up/",
        "http://github.com/Org/Up",
        "git@github.com:Org/Up.git",
        "ssh://git@github.com/Org/Up",
        " https://github.com/Org/Up \n",
    ],
)
def test_a_github_repository_is_known_by_any_url(url: str) -> None:
    assert github_slug(url) == "Org/Up" and web_url(url) == "https://github.com/Org/Up"
    # git and package upstreams read their URL the same way (packages took no ssh URL before)
    assert Upstream("up", "upstreams/up", url, None).web_url == web_url(url)
    assert PackageUpstream("up", "1.0", url).github_slug == "Org/Up"


def test_other_repositories_keep_their_url() -> None:
    assert github_slug("https://gitlab.com/o/r.git") is None
    assert web_url("https://gitlab.com/o/r.git/") == "https://gitlab.com/o/r"
    assert github_slug("https://github.com/only-owner") is None


def test_a_commit_in_a_link_is_7_to_40_hex_digits_either_case() -> None:
    assert is_commit(SHA) and is_commit(SHA.upper()) and is_commit(SHA[:7])
    assert not is_commit(SHA[:6]) and not is_commit("v1.2.3") and not is_commit(SHA + "0")
    assert parse(build("https://github.com/o/r", SHA.upper(), "a.py")).commit == SHA


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
