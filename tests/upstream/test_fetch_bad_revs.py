"""A citation of a revision that does not exist never blocks the fetch of an upstream's other
citations; each bad revision is reported at its page and line, as what it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from atlas.git.store import GitStore
from atlas.upstream import fetch
from atlas.upstream.resolve import ERROR, OK, Resolver
from gitfixtures import Commit, FixtureUpstream, make_book, make_repo

pytestmark = pytest.mark.usefixtures("fixture_git_config")
NO_SUCH_COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def up(tmp_path):
    return make_repo(
        tmp_path / "up",
        [
            Commit({"pkg/old.py": "old = 1\n", "pkg/a.py": "a = 0\n"}, tags=["v1.0"]),
            Commit({"pkg/a.py": "a = 1\nb = 2\n"}),
        ],
    )


def page(up) -> str:
    v0 = up.commits[0]
    return (
        "# P\n"  # 1
        "\n"  # 2
        "{upstream}`up pkg/a.py:1-2`\n"  # 3: the pin
        "\n"  # 4
        "{upstream}`up@v1.0 pkg/old.py:1`\n"  # 5: a tag
        "\n"  # 6
        "{upstream}`up@zzzzzzzz pkg/a.py:1`\n"  # 7: neither hex nor a tag
        "\n"  # 8
        f"{{upstream}}`up@{NO_SUCH_COMMIT} pkg/a.py:1`\n"  # 9: a commit that does not exist
        "\n"  # 10
        f"{{upstream}}`up@{v0} pkg/a.py:1`\n"  # 11: an explicit commit
    )


@pytest.fixture
def book(tmp_path, up) -> Path:
    return make_book(
        tmp_path / "book",
        {"source/index.md": page(up)},
        {"up": FixtureUpstream(up, pin=up.commits[1], url=up.url)},
    )


def test_bad_revisions_are_reported_at_their_lines_and_the_rest_is_fetched(
    book, up, capsys
) -> None:
    rc = fetch.main(["fetch", "--root", str(book)])
    err = capsys.readouterr().err
    assert rc == 1
    bad = [line.strip() for line in err.splitlines() if "bad revision:" in line]
    assert len(bad) == 2, err
    assert bad[0].endswith(
        "bad revision: source/index.md:7: up@zzzzzzzz: neither a commit SHA (7 to 40 hex "
        f"digits) nor a tag of {up.url}; write the commit's SHA or the tag's exact name"
    )
    assert bad[1].endswith(
        f"bad revision: source/index.md:9: up@{NO_SUCH_COMMIT}: commit {NO_SUCH_COMMIT} is not "
        f"in {up.url}; fix the @REV (a commit of that repository)"
    )
    assert "couldn't find remote ref" not in err and "FAILED" not in err
    assert "upstreams: 1/1 ready" in err and "2 citation(s) name a revision that does not" in err
    # every valid citation's objects arrived
    store = GitStore(book / ".git" / "atlas-upstreams" / "up.git")
    try:
        assert store.read_blob(up.commits[1], "pkg/a.py") == b"a = 1\nb = 2\n"
        assert store.read_blob("v1.0", "pkg/old.py") == b"old = 1\n"
        assert store.read_blob(up.commits[0], "pkg/a.py") == b"a = 0\n"
    finally:
        store.close()
    # a second run fetches nothing more and still names the same two
    rc = fetch.main(["fetch", "--root", str(book)])
    assert rc == 1 and capsys.readouterr().err.count("bad revision:") == 2


def test_the_build_names_a_revision_that_is_neither_hex_nor_a_tag(book, up, capsys) -> None:
    fetch.main(["fetch", "--root", str(book)])
    resolver = Resolver(book)
    try:
        good = resolver.resolve("up@v1.0 pkg/old.py:1")
        assert good.status == OK, good.message
        res = resolver.resolve("up@zzzzzzzz pkg/a.py:1")
        assert res.status == ERROR
        assert res.message.startswith(
            "revision 'zzzzzzzz' is neither a commit SHA (7 to 40 hex digits) nor a tag in up's "
            "objects"
        )
        res = resolver.resolve(f"up@{NO_SUCH_COMMIT} pkg/a.py:1")
        assert res.status == ERROR and res.message.startswith(f"commit '{NO_SUCH_COMMIT}' is not")
    finally:
        for store in resolver._stores.values():
            if store is not None:
                store.close()
