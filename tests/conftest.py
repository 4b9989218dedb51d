"""Shared fixtures: fixture books under tests/roots, built with the fixtures' settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = Path(__file__).resolve().parent / "roots"

# Fixture books' conf.py load their settings through this variable (tests/roots/*/conf.py): the
# minimal tests/roots/book_conf.py, not the real conf.py and its bibliography (see its docstring).
# The real conf.py keeps its own variable, for the smoke root test-real-conf.
os.environ.setdefault("ATLAS_BOOK_CONF", str(ROOTS / "book_conf.py"))
os.environ.setdefault("ATLAS_REAL_BOOK_CONF", str(REPO / "conf.py"))
# Triton picks interpreter or compiler when its own library functions are decorated, at import:
# whichever test imports triton first (torch can, through inductor) must find the CPU interpreter
# already chosen, or the kernels chapter's kernels call uninterpreted tl.max and fail.
os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture(scope="session")
def rootdir() -> Path:
    """Where sphinx.testing finds ``test-NAME`` fixture books."""
    return ROOTS


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture
def fixture_git_config(monkeypatch) -> None:
    """Git processes of the code under test see only the fixture git config (file:// allowed,
    no global config: never the machine's mirrors), as fixture repositories need."""
    from gitfixtures import git_env

    for key, value in git_env().items():
        if key.startswith("GIT_"):
            monkeypatch.setenv(key, value)


# -- the demo upstream, shared by the upstream tests ---------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The ``demo`` fixture upstream (tests/upstream_demo.py). One per test module, not per
    session: some tests write into its object store (fetch), and a module must not see what
    another module's tests did to it."""
    from upstream_demo import make_demo

    return make_demo(tmp_path_factory.mktemp("demo") / "demo")


@pytest.fixture
def stores(tmp_path, demo) -> Path:
    """An ``ATLAS_UPSTREAMS_ROOT`` folder holding ``demo.git`` (a link to the demo's git dir),
    fresh for each test: tests that fetch into it do not leak into the next one."""
    from gitfixtures import stores_dir

    return stores_dir(tmp_path / "stores", {"demo": demo})
