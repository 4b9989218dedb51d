"""Each lab page's cache key holds only the pins of the upstreams its labs read: moving one
pin changes the keys of the pages whose labs read that upstream, and of no other page."""

from __future__ import annotations

import subprocess
from pathlib import Path

from atlas.bookroot import BookPaths
from atlas.labs.cache import states_digest, upstream_states, upstreams_read
from atlas.labs.directive import parse_examples
from atlas.labs.model import LabSpec


def spec(text: str) -> LabSpec:
    return LabSpec("p", 0, "a", "t", text, 1, 1, parse_examples(text, 1), 60.0)


def kit(tmp_path: Path) -> Path:
    root = tmp_path / "labkit"
    (root / "serving").mkdir(parents=True)
    (root / "serving" / "__init__.py").write_text("")
    (root / "serving" / "engine.py").write_text(
        'from atlas.labkit.pinned import pinned\n\nUPSTREAM = "tool"\n\n'
        "def files():\n    return pinned(UPSTREAM)\n"
    )
    (root / "harness.py").write_text("def pinned(name):\n    return name\n")
    (root / "units.py").write_text('GIB = 2**30\nLABEL = "not an upstream"\n')
    return root


def book(tmp_path: Path) -> tuple[Path, callable]:
    root = tmp_path / "book"
    root.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)

    git("init", "-q")
    (root / ".gitmodules").write_text(
        '[submodule "tool"]\n\tpath = upstreams/tool\n\turl = https://example.org/tool.git\n'
        '[submodule "other"]\n\tpath = upstreams/other\n\turl = https://example.org/other.git\n'
    )
    git("update-index", "--add", "--cacheinfo", f"160000,{'a' * 40},upstreams/tool")
    git("update-index", "--add", "--cacheinfo", f"160000,{'c' * 40},upstreams/other")
    return root, git


def test_a_page_reads_the_upstreams_named_in_its_labs_and_their_labkit(tmp_path) -> None:
    root = kit(tmp_path)
    known = {"tool", "other"}
    via_labkit = [spec(">>> from atlas.labkit.serving.engine import files\n")]
    in_the_lab = [spec('>>> from atlas.labkit.pinned import pinned\n>>> f = pinned("other")\n')]
    neither = [spec(">>> from atlas.labkit.units import GIB\n")]
    assert upstreams_read(via_labkit, known, root) == {"tool"}
    assert upstreams_read(in_the_lab, known, root) == {"other"}
    assert upstreams_read(neither, known, root) == set()


def test_moving_one_pin_changes_only_the_keys_of_pages_that_read_it(tmp_path) -> None:
    root, git = book(tmp_path)
    before = upstream_states(BookPaths.at(root))
    git("update-index", "--cacheinfo", f"160000,{'b' * 40},upstreams/tool")
    after = upstream_states(BookPaths.at(root))
    assert states_digest(before, {"tool"}) != states_digest(after, {"tool"})
    assert states_digest(before, {"other"}) == states_digest(after, {"other"})
    assert states_digest(before, set()) == states_digest(after, set())
    assert states_digest(before) != states_digest(after)  # all of them: the old key
