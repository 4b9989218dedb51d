"""The upstream core: registry, git object reads, the citation grammar, scanning, the lock."""

from __future__ import annotations

from pathlib import Path

import pytest
from atlas.code.spec import CitationSpec, SpecError, line_ranges, parse_spec
from atlas.git.store import GitStore, MissingObject, UnsafePath, store_for
from atlas.upstream.citations import scan_book, scan_markdown
from atlas.upstream.lock import LockEntry, load_lock, lock_key, save_lock, text_hash
from atlas.upstream.packages.registry import PackageUpstream
from atlas.upstream.registry import Upstream, load_registry, object_store
from atlas.upstream.resolve import OK, Resolution, ResolutionStatus
from gitfixtures import Commit, FixtureUpstream, Symlink, git, make_book, make_repo, stores_dir

PY_V1 = "def alpha():\n    return 1\n"
PY_V2 = "import os\n\n\ndef alpha():\n    return 2\n# 注释: 中文\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> object:
    base = tmp_path_factory.mktemp("core")
    return make_repo(
        base / "up",
        [
            Commit({"pkg/a.py": PY_V1, "README": "hello\n"}, tags=["v1"]),
            Commit(
                {
                    "pkg/a.py": PY_V2,
                    "link.py": Symlink("pkg/a.py"),
                    "dirlink": Symlink("pkg"),
                    "escape.py": Symlink("../../etc/passwd"),
                    "abs.py": Symlink("/etc/passwd"),
                }
            ),
            Commit(renames={"pkg/a.py": "pkg/b.py"}, tags=["v3"]),
        ],
    )


# -- spec -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "megatron@E03878B5 megatron/core/foo.py:10-40",
            CitationSpec("megatron", "e03878b5", "megatron/core/foo.py", "10-40"),
        ),
        ("m a.py:7", CitationSpec("m", None, "a.py", "7")),
        ("m a.py:7-7,9-12", CitationSpec("m", None, "a.py", "7,9-12")),
        ("m@v1.2 ./src//a.py", CitationSpec("m", "v1.2", "src/a.py", None)),
        ("m a.py::Class.method", CitationSpec("m", None, "a.py", "::Class.method")),
        ("m a.cu:::ns::kernel()", CitationSpec("m", None, "a.cu", "::ns::kernel")),
    ],
)
def test_parse_spec(text: str, expected: CitationSpec) -> None:
    spec = parse_spec(text)
    assert spec == expected
    assert parse_spec(str(spec)) == spec


@pytest.mark.parametrize(
    "text, message",
    [
        ("m /etc/passwd", "absolute"),
        ("m ../x.py", r"'\.\.'"),
        ("m a/../../x.py", r"'\.\.'"),
        ("m@--output=x a.py", "neither a commit SHA"),
        ("m@HEAD~1 a.py", "neither a commit SHA"),
        ("m@abc a.py", "too short"),
        ("m -x.py", "option"),
        ("m a.py:40-10", "ends before it starts"),
        ("m a.py:10-20,15-30", "ascending"),
        ("m a.py:0", "start at 1"),
        ("m a.py:ten", "not understood"),
        ("m", "no path"),
        ("-m a.py", "upstream name"),
        ("m a.py b.py", "more than two parts"),
    ],
)
def test_parse_spec_refuses(text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        parse_spec(text)


def test_the_caption_shortens_a_commit_not_a_version() -> None:
    sha = "2f49c09d80faf5abb70634d3cccac23ea16a541a"
    spec = parse_spec(f"up@{sha} pkg/a.py:1-2")
    git_up = Upstream("up", "upstreams/up", "https://github.com/o/up", sha)
    package = PackageUpstream("up", "2.13.0rc1", "https://github.com/o/up")
    assert (git_up.kind, package.kind) == ("git", "package")
    at_commit = Resolution("x", OK, spec=spec, upstream=git_up)
    assert at_commit.caption().startswith("up@2f49c09d \u00b7 pkg/a.py")
    at_version = Resolution("x", OK, spec=spec, upstream=package, commit="2.13.0rc1")
    assert at_version.caption().startswith("up@2.13.0rc1 \u00b7 ")
    assert OK == "ok" and f"{ResolutionStatus.DRIFT}" == "drift"  # the words tables print


def test_line_ranges() -> None:
    assert line_ranges("10-40,55") == [(10, 40), (55, 55)]
    assert line_ranges("::f") is None and line_ranges(None) is None


# -- the object store (atlas.git.store) ---------------------------------------------------------
def test_store_reads_blobs_at_any_commit(repo) -> None:
    store = GitStore(repo.git_dir)
    first, second, third = repo.commits
    assert store.read_blob(first, "pkg/a.py") == PY_V1.encode()
    assert store.read_blob(second, "pkg/a.py").decode() == PY_V2
    assert store.read_blob(third, "pkg/b.py").decode() == PY_V2
    with pytest.raises(FileNotFoundError):
        store.read_blob(third, "pkg/a.py")
    with pytest.raises(FileNotFoundError, match="folder"):
        store.read_blob(third, "pkg")
    assert store.tree_entry(third, "pkg/b.py")[:2] == ("100644", "blob")
    store.close()


def test_store_resolves_prefixes_and_tags_only(repo) -> None:
    store = store_for(repo.git_dir)
    assert store_for(repo.git_dir) is store
    assert store.resolve(repo.commits[1][:9]) == repo.commits[1]
    assert store.resolve("v1") == repo.commits[0]
    assert store.resolve("0000000") is None
    assert store.resolve("nope") is None
    for bad in ("--all", "HEAD~1", "v1^{tree}", "a..b", "x:y"):
        with pytest.raises(UnsafePath):
            store.resolve(bad)


def test_store_symlinks_inside_followed_outside_refused(repo) -> None:
    store = store_for(repo.git_dir)
    second = repo.commits[1]
    assert store.read_blob(second, "link.py").decode() == PY_V2
    assert store.read_blob(second, "dirlink/a.py").decode() == PY_V2
    with pytest.raises(UnsafePath, match="outside"):
        store.read_blob(second, "escape.py")
    with pytest.raises(UnsafePath, match="outside"):
        store.read_blob(second, "abs.py")
    with pytest.raises(UnsafePath):
        store.read_blob(second, "../x")


def test_missing_blob_in_partial_clone_is_missing_object_not_a_fetch(repo, tmp_path) -> None:
    clone = tmp_path / "partial.git"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:none", repo.url, str(clone))
    store = GitStore(clone)
    third = repo.commits[2]
    assert store.tree_entry(third, "pkg/b.py") is not None  # trees are there
    with pytest.raises(MissingObject):
        store.read_blob(third, "pkg/b.py")
    sha = store.tree_entry(third, "README")[2]
    assert store.has_object(sha) is False
    assert store.resolve(third[:8]) == third  # the pipe survives a missing object
    store.close()


# -- registry ---------------------------------------------------------------------------------
def test_registry_from_uninitialised_submodules(repo, tmp_path) -> None:
    book = make_book(
        tmp_path / "book",
        {"source/index.md": "# Book\n"},
        {
            "up": FixtureUpstream(repo, pin=repo.commits[1], url="https://github.com/Org/Up.git"),
            "vllm": FixtureUpstream(
                None, url="https://github.com/vllm-project/vllm", link_only_pin="156b1266"
            ),
        },
    )
    reg = load_registry(book)
    assert reg["up"] == Upstream(
        "up", "upstreams/up", "https://github.com/Org/Up.git", repo.commits[1], None
    )
    assert reg["vllm"].pin is None and reg["vllm"].link_only_pin == "156b1266"
    assert reg["up"].github_slug == "Org/Up"
    assert (
        reg["up"].permalink("abc", "a b.py", (10, 40))
        == "https://github.com/Org/Up/blob/abc/a%20b.py#L10-L40"
    )
    assert reg["up"].permalink("abc", "a.py", (7, 7)).endswith("#L7")
    assert object_store(book, reg["up"]) is None
    stores = stores_dir(tmp_path / "stores", {"up": repo})
    assert object_store(book, reg["up"], stores) == repo.git_dir.resolve()
    bare = tmp_path / "book" / ".git" / "atlas-upstreams" / "up.git"
    git(tmp_path, "clone", "-q", "--bare", repo.url, str(bare))
    assert object_store(book, reg["up"]) == bare.resolve()


def test_registry_initialised_submodule(repo, tmp_path) -> None:
    book = make_book(
        tmp_path / "book",
        {"x.md": "x\n"},
        {"up": FixtureUpstream(repo, pin=repo.commits[0], init=True)},
    )
    up = load_registry(book)["up"]
    assert up.pin == repo.commits[0]
    store = object_store(book, up)
    assert store is not None and store.is_relative_to((book / ".git").resolve())


# -- citations --------------------------------------------------------------------------------
PAGE = """\
# Page

Text {upstream}`up@v1 pkg/a.py:1-2` and ``{upstream}`up a.py:1` `` in code.

```{upstream} up pkg/a.py::alpha
:contains: return
:emphasize-lines: 2
```

````markdown
```{upstream} up shown/not/cited.py:1
```
````

:::{note}
```{upstream} up@v3 pkg/b.py
---
caption: whole
---
```
:::

```{upstream} up /abs.py
```
"""


def test_scan_markdown_finds_citations_not_examples() -> None:
    sites = scan_markdown(PAGE, "source/p.md")
    assert [(s.line, s.kind, s.raw) for s in sites] == [
        (3, "role", "up@v1 pkg/a.py:1-2"),
        (5, "directive", "up pkg/a.py::alpha"),
        (16, "directive", "up@v3 pkg/b.py"),
        (23, "directive", "up /abs.py"),
    ]
    assert sites[1].options == {"contains": "return", "emphasize-lines": "2"}
    assert sites[2].options == {"caption": "whole"}
    assert sites[3].spec is None and "absolute" in sites[3].error


def test_scan_book(tmp_path) -> None:
    (tmp_path / "source" / "sub").mkdir(parents=True)
    (tmp_path / "source" / "sub" / "p.md").write_text(PAGE)
    (tmp_path / "source" / "q.rst").write_text(
        "Hi :upstream:`up a.py:3`.\n\n.. upstream:: up b.py:1\n   :dedent: 4\n"
    )
    sites = scan_book(tmp_path)
    assert [(s.page, s.line) for s in sites][:1] == [("source/q.rst", 1)]
    assert sites[1].options == {"dedent": "4"}
    assert len(sites) == 6


# -- lock -------------------------------------------------------------------------------------
def test_lock_round_trip(tmp_path) -> None:
    assert load_lock(tmp_path) == {}
    key = lock_key("up", "a" * 40, "x.py", "1-2", {"dedent": "4", "caption": "c"})
    assert key == f"up@{'a' * 40} x.py:1-2 [dedent=4]"
    assert lock_key("up", "b" * 40, "x.py", "::f") == f"up@{'b' * 40} x.py::f"
    bare = lock_key("up", "b" * 40, "x.py", "1", {"dedent": "", "end-before": "x"})
    assert bare == f"up@{'b' * 40} x.py:1 [end-before=x;dedent]"
    data = {key: LockEntry("b" * 40, text_hash("x")), "a": LockEntry("c" * 40, text_hash("y"))}
    assert save_lock(tmp_path, data) is True
    assert save_lock(tmp_path, data) is False
    assert load_lock(tmp_path) == data
    text = (tmp_path / "upstreams.lock").read_text()
    assert text.index('"a"') < text.index(key)
    (tmp_path / "upstreams.lock").write_text("{")
    with pytest.raises(ValueError, match="atlas.upstream lock"):
        load_lock(tmp_path)


def test_fixture_repo_is_reproducible(tmp_path) -> None:
    a = make_repo(tmp_path / "a", [{"f.txt": "x\n"}])
    b = make_repo(tmp_path / "b.git", [{"f.txt": "x\n"}], bare=True)
    assert a.commits == b.commits
    assert Path(b.git_dir) == tmp_path / "b.git"
