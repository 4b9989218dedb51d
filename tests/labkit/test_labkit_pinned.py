"""The one loader of pinned upstream code (atlas.labkit.pinned) and its one skip path.

What a lab relies on: definitions cut out of a file run at their own lines and see the globals
given; a method becomes a plain function; decorators are kept or dropped as asked; a missing
definition is an error (the pin moved), absent objects are a skip; the skip crosses rank
workers; the runnable file exits non-zero when a lab skipped unless told to allow it.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import traceback
import unittest
from pathlib import Path

import pytest
from atlas.labkit import RankSkipped, run_ranks
from atlas.labkit.pinned import (
    UpstreamUnavailable,
    definitions,
    dropping,
    keeping,
    module,
    package,
    read,
)
from gitfixtures import FixtureUpstream, make_book, make_repo, stores_dir

CODE = '''"""An upstream file whose imports cannot load here."""
import some_gpu_stack

SCALE = 3


def tag(fn):
    fn.tagged = True
    return fn


def compiled(fn):
    raise RuntimeError("needs a GPU")


@tag
def scaled(x):
    return SCALE * helper(x)


@compiled
def fast(x):
    return x


class Box:
    def __init__(self, v):
        self.v = v

    @compiled
    def double(self):
        return 2 * self.v


def helper(x):
    if x < 0:
        raise ValueError("negative")
    return x + 1
'''
PKG_A = "VALUE = 41\n"
PKG_B = "from pkg import a\n\nVALUE = a.VALUE + 1\n"


@pytest.fixture
def book(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    files = {"lib/code.py": CODE, "pkg/a.py": PKG_A, "pkg/b.py": PKG_B}
    repo = make_repo(tmp_path / "up", [files])
    root = make_book(tmp_path / "book", {"README.md": "x\n"}, {"up": FixtureUpstream(repo)})
    monkeypatch.setenv("ATLAS_UPSTREAMS_ROOT", str(stores_dir(tmp_path / "stores", {"up": repo})))
    return root, repo


def test_definitions_run_only_what_is_named_at_their_own_lines(book) -> None:  # type: ignore[no-untyped-def]
    root, repo = book
    ns = definitions("up", "lib/code.py", ["scaled", "helper", "SCALE", "tag"], root=root)
    assert ns.scaled(1) == 6 and ns["helper"](1) == 2
    assert ns.scaled.tagged  # a decorator it accepts stays
    assert ns.label == f"up@{repo.head[:8]}/lib/code.py"
    with pytest.raises(ValueError) as info:
        ns.scaled(-1)
    frame = traceback.extract_tb(info.value.__traceback__)[-1]
    assert frame.filename == ns.label and frame.line == 'raise ValueError("negative")'
    assert "return SCALE * helper(x)" in inspect.getsource(ns.scaled)


def test_globals_set_after_loading_are_seen(book) -> None:  # type: ignore[no-untyped-def]
    root, _ = book
    ns = definitions("up", "lib/code.py", ["scaled", "helper", "tag"], {"SCALE": 1}, root=root)
    assert ns.scaled(1) == 2
    ns["SCALE"] = 10  # a stand-in swapped for one check
    assert ns.scaled(1) == 20


def test_methods_become_functions_and_decorators_follow_the_policy(book) -> None:  # type: ignore[no-untyped-def]
    root, _ = book
    ns = definitions(
        "up",
        "lib/code.py",
        ["Box.double", "fast", "compiled"],
        root=root,
        decorators=dropping("compiled"),
    )
    assert ns.double(type("S", (), {"v": 4})()) == 8 and ns.fast(5) == 5
    with pytest.raises(RuntimeError, match="needs a GPU"):  # kept, it runs at definition
        definitions(
            "up", "lib/code.py", ["fast", "compiled"], root=root, decorators=keeping("compiled")
        )


def test_a_definition_missing_from_the_file_is_an_error_not_a_skip(book) -> None:  # type: ignore[no-untyped-def]
    root, _ = book
    with pytest.raises(LookupError, match="defines no nowhere") as info:
        definitions("up", "lib/code.py", ["scaled", "nowhere"], root=root)
    assert not isinstance(info.value, unittest.SkipTest)


def test_whole_files_and_packages(book) -> None:  # type: ignore[no-untyped-def]
    root, repo = book
    mods = package("up", ["pkg/a.py", "pkg/b.py"], root=root)
    assert mods["pkg.b"].VALUE == 42 and "pkg" not in sys.modules
    m = module("up", "pkg/b.py", {"pkg": mods["pkg"], "pkg.a": mods["pkg.a"]}, root=root)
    assert m.VALUE == 42 and m.__file__ == f"up@{repo.head[:8]}/pkg/b.py"
    text, label = read("up", "pkg/a.py", digits=7, with_path=True, root=root)
    assert text == PKG_A and label == f"up@{repo.head[:7]}/pkg/a.py"


def test_absent_objects_are_the_one_skip(book, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, _ = book
    monkeypatch.setenv("ATLAS_UPSTREAMS_ROOT", str(tmp_path / "nowhere"))
    for load in (
        lambda: definitions("up", "lib/code.py", ["helper"], root=root),
        lambda: module("up", "pkg/a.py", root=root),
        lambda: package("up", ["pkg/a.py"], root=root),
        lambda: read("up", "pkg/a.py", root=root),
    ):
        with pytest.raises(UpstreamUnavailable, match="make upstreams"):
            load()
    assert issubclass(UpstreamUnavailable, unittest.SkipTest)


def _skips_on_odd_ranks(rank: int, world_size: int) -> int:
    if rank % 2:
        raise UpstreamUnavailable("no object store for up; run `make upstreams`")
    return rank


def test_a_skip_in_a_rank_worker_skips_the_lab() -> None:
    """Before: the rank's SkipTest came back as a RankError with a remote traceback, and the
    lab failed; now run_ranks raises a SkipTest with the rank's reason."""
    with pytest.raises(RankSkipped, match=r"rank 1 of 2 skipped: no object store") as info:
        run_ranks(_skips_on_odd_ranks, 2, timeout=60)
    assert isinstance(info.value, unittest.SkipTest)
    assert run_ranks(_skips_on_odd_ranks, 1, timeout=60) == [0]


def _runnable(tmp_path: Path, lab: str) -> Path:
    from atlas.labs.model import LabSpec
    from atlas.teach.runnable import render

    spec = LabSpec("page", 0, "lab-0", "t", lab, 3, 2, (), 60.0)
    path = tmp_path / "page.py"
    path.write_text(render("page", "Page", "page.md", [spec], tmp_path), encoding="utf-8")
    return path


def test_runnable_file_exits_non_zero_when_a_lab_skipped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lab = ">>> import unittest\n>>> raise unittest.SkipTest('up is absent')\n"
    path = _runnable(tmp_path, lab)
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "SKIP  t: up is absent" in run.stdout and "--allow-skips" in run.stdout
    allowed = subprocess.run([sys.executable, str(path), "--allow-skips"], capture_output=True)
    assert allowed.returncode == 0
    env = {"ATLAS_LABS_ALLOW_SKIPS": "1", "PATH": "/usr/bin:/bin"}
    assert subprocess.run([sys.executable, str(path)], env=env, capture_output=True).returncode == 0
