"""The git layer (atlas.git): one environment, one revision rule, the book's repository
queries, the lock-key parser and BookPaths, each on small data or fixture repositories."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from atlas import bookroot
from atlas.bookroot import BookPaths, NotABook, extra_stores_root
from atlas.git import process, repo
from atlas.git.revs import KnownRevs, expand_rev, is_full_sha, is_sha_prefix
from atlas.git.store import GitStore, UnsafePath
from atlas.upstream.lock import (
    LockEntry,
    LockKey,
    known_revs,
    lock_key,
    lock_shas,
    parse_lock_key,
    parse_rev_key,
    rev_key,
    save_lock,
)
from atlas.upstream.registry import load_registry
from gitfixtures import Commit, FixtureUpstream, git, make_book, make_repo

A = "a" * 40
AB = "ab" + "1" * 38
AC = "ac" + "2" * 38
PIN = "beef" + "0" * 36


# -- the revision rule, on plain data -----------------------------------------------------------
def test_known_revs_expand_in_order() -> None:
    known = KnownRevs(pin=PIN, recorded={"v1.0": A, "abc1234": AB}, shas={AB, AC})
    assert known.expand(A.upper()) == A  # a full SHA as written (lower-cased)
    assert known.expand("beef000") == PIN  # the pin's prefix
    assert known.expand("v1.0") == A  # what the lock recorded for a tag
    assert known.expand("ab11111") == AB  # the only known SHA with that prefix
    assert known.expand("a") is None  # ab... and ac... : ambiguous, so unknown
    assert known.expand("v2.0") is None
    assert KnownRevs().expand("ab11111") is None


def test_what_reads_as_a_sha() -> None:
    assert is_full_sha(A) and is_full_sha("c" * 64)  # SHA-1 and SHA-256 ids
    assert not is_full_sha(A.upper()) and not is_full_sha(A[:39]) and not is_full_sha(A + "\n")
    assert is_sha_prefix("abc1234") and is_sha_prefix(A) and not is_sha_prefix(A + "a")
    assert not is_sha_prefix("abc123")  # 6 digits: too short for a citation
    assert not is_sha_prefix("ABC1234") and is_sha_prefix("ABC1234", any_case=True)
    assert is_sha_prefix("abc", 1, 6) and not is_sha_prefix("", 1, 6)
    assert not is_sha_prefix("abc123g") and not is_sha_prefix("v1.2.3")
    assert not is_sha_prefix("abc1234\n")  # nothing trails the digits


def test_expand_rev_refuses_revision_expressions() -> None:
    for bad in ("HEAD~1", "--all", "main@{1}", "a..b"):
        with pytest.raises(UnsafePath):
            expand_rev(bad, KnownRevs(pin=PIN))


def test_expand_rev_lets_the_objects_decide(tmp_path) -> None:
    up = make_repo(tmp_path / "up", [Commit({"f": "1\n"}, tags=["v1"]), {"f": "2\n"}])
    store = GitStore(up.git_dir)
    try:
        first = git(up.path, "rev-parse", "v1^{commit}").strip()
        assert expand_rev("v1", store=store) == first
        assert expand_rev(up.head[:9], store=store) == up.head
        # the store holds no such commit: the objects decide, what the lock knows does not
        assert expand_rev("beef000", KnownRevs(pin=PIN), store) is None
        assert expand_rev("beef000", KnownRevs(pin=PIN)) == PIN
    finally:
        store.close()


# -- lock keys -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("selector", "options"),
    [
        (None, {}),
        ("10-40", {}),
        ("10-40,55-60", {"dedent": "4"}),
        ("::Class.method", {"start-after": "# begin", "dedent": ""}),
        ("7", {"end-before": "return x"}),
    ],
)
def test_parse_lock_key_inverts_lock_key(selector, options) -> None:
    key = lock_key("megatron", A, "megatron/core/a:b.py", selector, options)
    parsed = parse_lock_key(key)
    assert parsed == LockKey("megatron", A, "megatron/core/a:b.py", selector, options)
    assert lock_key(parsed.name, parsed.commit, parsed.path, parsed.selector, parsed.options) == key


@pytest.mark.parametrize(
    "bad", ["megatron@abc1234 a.py", "megatron a.py", f"megatron@{A}", f"x@{A} a.py [dedent"]
)
def test_parse_lock_key_refuses_what_is_not_a_key(bad) -> None:
    with pytest.raises(ValueError):
        parse_lock_key(bad)


def test_lock_shas_and_rev_keys() -> None:
    keys = [lock_key("m", A, "a.py", "1-2"), lock_key("m", AB, "b.py", None), "junk", f"n@{AC} c"]
    assert lock_shas(keys) == {"m": {A, AB}, "n": {AC}}
    assert parse_rev_key("megatron@v0.9") == ("megatron", "v0.9")
    with pytest.raises(ValueError):
        parse_rev_key("megatron")


# -- the process rules ---------------------------------------------------------------------------
def test_git_env_never_prompts_and_reads_forbid_transports(monkeypatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.file.allow")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "always")
    env = process.git_env()
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_PAGER"] == "cat"
    assert "GIT_NO_LAZY_FETCH" not in env and env["GIT_CONFIG_COUNT"] == "1"
    reads = process.git_env(transports=False, lazy_fetch=False)
    assert reads["GIT_NO_LAZY_FETCH"] == "1"
    count = int(reads["GIT_CONFIG_COUNT"])
    assert count == 1 + len(process.NO_FETCH)
    # ours come after the caller's, so that they win
    last = {reads[f"GIT_CONFIG_KEY_{i}"]: reads[f"GIT_CONFIG_VALUE_{i}"] for i in range(count)}
    assert last["protocol.file.allow"] == "never" and last["protocol.allow"] == "never"


def test_command_names_a_store_or_a_work_tree(tmp_path) -> None:
    assert process.command(["log"], git_dir=tmp_path) == ["git", f"--git-dir={tmp_path}", "log"]
    assert process.command(["log"], cwd=tmp_path) == ["git", "-C", str(tmp_path), "log"]


# -- the book's repository -----------------------------------------------------------------------
@pytest.fixture
def book(tmp_path) -> Path:
    up = make_repo(tmp_path / "up", [{"f.py": "x = 1\n"}, {"f.py": "x = 2\n"}])
    files = {"conf.py": "", "source/index.md": "# Home\n", "source/sub/p.md": "# P\n"}
    return make_book(tmp_path / "book", files, {"demo": FixtureUpstream(up, pin=up.head)})


def test_repo_reads_the_registry_and_moves_a_gitlink(book, tmp_path) -> None:
    entries = repo.gitmodules(book)
    assert entries["demo"]["path"] == "upstreams/demo" and entries["demo"]["url"]
    links = repo.gitlinks(book)
    assert links is not None and set(links) == {"upstreams/demo"}
    old = links["upstreams/demo"]
    assert repo.common_dir(book) == (book / ".git").resolve()
    assert repo.set_gitlink(book, "upstreams/demo", A) is None
    assert repo.gitlinks(book) == {"upstreams/demo": A}
    assert (book / "upstreams" / "demo").is_dir()
    git(book, "commit", "-q", "-am", "bump")
    assert repo.past_pins(book, "upstreams/demo") == {old, A}
    assert repo.last_commit_time(book) is not None
    outside = tmp_path / "plain"
    outside.mkdir()
    assert repo.gitlinks(outside) is None and repo.gitmodules(outside) == {}
    (book / ".gitmodules").write_text("[submodule\n")
    with pytest.raises(repo.GitmodulesError, match="line 1"):
        repo.gitmodules(book)


def test_recent_refs_names_tags_and_branches_newest_first(tmp_path) -> None:
    up = make_repo(tmp_path / "up", [Commit({"f": "1\n"}, tags=["v1"]), {"f": "2\n"}])
    refs = repo.recent_refs(up.git_dir)
    first = git(up.path, "rev-parse", "v1^{commit}").strip()
    assert f"v1 {first[:8]}" in refs
    assert any(line.endswith(f" {up.head[:8]}") and not line.startswith("v1") for line in refs)
    assert repo.recent_refs(up.git_dir, count=1) == refs[:1]


def test_known_revs_gathers_pin_lock_and_past_pins(book) -> None:
    up = load_registry(book)["demo"]
    old = up.pin
    assert old is not None
    save_lock(
        book,
        {lock_key("demo", AB, "f.py", None): LockEntry("b", "s"), lock_key("x", AC, "f", None):
         LockEntry("b", "s")},
        {rev_key("demo", "v1.0"): A, rev_key("other", "v2"): AC},
    )  # fmt: skip
    repo.set_gitlink(book, "upstreams/demo", PIN)
    git(book, "commit", "-q", "-am", "bump")
    up = load_registry(book)["demo"]
    known = known_revs(book, up)
    assert known.pin == PIN and dict(known.recorded) == {"v1.0": A}  # this upstream's revs only
    assert set(known.shas) == {AB, old, PIN}  # lock keys and past pins, not other upstreams'
    assert known.expand(old[:9]) == old  # a citation left behind by the bump
    assert known.expand("ac22222") is None
    # a given lock (``lock`` rebuilding a corrupt one) replaces the file's
    assert set(known_revs(book, up, lock={}, revs={}).shas) == {old, PIN}
    (book / "upstreams.lock").write_text("{ not json")  # unreadable: it adds nothing
    assert dict(known_revs(book, up).recorded) == {}


def test_rev_key_is_what_parse_rev_key_takes_apart() -> None:
    assert rev_key("demo", "v1.0") == "demo@v1.0"
    assert parse_rev_key(rev_key("demo", "abc1234")) == ("demo", "abc1234")


# -- BookPaths -----------------------------------------------------------------------------------
def test_book_paths_from_the_command_line_anywhere_inside(book, monkeypatch) -> None:
    monkeypatch.delenv(bookroot.UPSTREAMS_ROOT_ENV, raising=False)
    monkeypatch.chdir(book / "source" / "sub")
    here = BookPaths.from_cli()
    assert here == BookPaths.from_cli(book) == BookPaths.from_cli(start=book)
    assert here.root == book.resolve() and here.source == book.resolve() / "source"
    assert here.lock_file == here.root / "upstreams.lock"
    assert here.snippets_cache == here.root / "snippets_cache"
    assert here.stores_root is None
    assert BookPaths.from_cli(book, stores="/s").stores_root == Path("/s")
    monkeypatch.setenv(bookroot.UPSTREAMS_ROOT_ENV, "/env/stores")
    assert BookPaths.from_cli().stores_root == Path("/env/stores")
    assert BookPaths.from_cli(book, stores="/s").stores_root == Path("/s")  # --stores wins
    monkeypatch.chdir(book.parent)
    with pytest.raises(NotABook):
        BookPaths.from_cli()


def test_book_paths_from_the_app(book, monkeypatch) -> None:
    from atlas.upstream.config import UpstreamConfig
    from sphinx.config import Config

    def app(**values: str) -> SimpleNamespace:
        config = Config(values, {})
        UpstreamConfig.register(SimpleNamespace(add_config_value=config.add))
        return SimpleNamespace(config=config, confdir=str(book), srcdir=str(book / "source"))

    monkeypatch.setenv(bookroot.UPSTREAMS_ROOT_ENV, "/env/stores")
    paths = BookPaths.from_app(app())
    assert paths == BookPaths.from_cli(book)  # the same book, whichever way it was found
    paths = BookPaths.from_app(
        app(
            atlas_book_root=str(book / "source"),
            atlas_snippets_cache=str(book / "cache"),
            atlas_upstreams_root=str(book / "stores"),
        )
    )
    assert paths.root == (book / "source").resolve() and paths.conf_dir == book.resolve()
    assert paths.snippets_cache == book / "cache" and paths.stores_root == book / "stores"
    bare = SimpleNamespace(config=Config({}, {}), confdir=str(book), srcdir=str(book))
    assert BookPaths.from_app(bare).root == book.resolve()  # without atlas.upstream loaded


def test_book_paths_at_a_root_and_the_commands_they_print(book, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(bookroot.UPSTREAMS_ROOT_ENV, raising=False)
    at = BookPaths.at(book)
    assert at == BookPaths.from_cli(book) and at.source_arg == "source"
    assert at.build == book.resolve() / "_build"
    pages_at_root = BookPaths.from_cli(book, source=".")
    assert pages_at_root.source_arg == "."
    # the pages folder travels with the paths: no global remembers it
    assert bookroot.command(pages_at_root, "lock", cwd=book).endswith("lock --source .")
    assert bookroot.command(book, "lock", cwd=book).endswith("-m atlas.upstream lock")
    assert bookroot.command(at, "lock", cwd=book) == bookroot.command(book, "lock", cwd=book)
    elsewhere = BookPaths.at(book, source=str(tmp_path / "pages"))
    assert bookroot.command(elsewhere, "fetch", cwd=tmp_path).endswith(
        f"fetch --root {book.resolve()} --source {tmp_path.resolve() / 'pages'}"
    )


def test_extra_stores_root_reads_the_variable_only_when_nothing_is_given(monkeypatch) -> None:
    monkeypatch.delenv(bookroot.UPSTREAMS_ROOT_ENV, raising=False)
    assert extra_stores_root() is None
    monkeypatch.setenv(bookroot.UPSTREAMS_ROOT_ENV, "/e")
    assert extra_stores_root() == Path("/e") and extra_stores_root("/g") == Path("/g")


def test_package_book_is_the_book_around_ext_atlas() -> None:
    assert bookroot.package_book() == Path(bookroot.__file__).resolve().parents[2]
