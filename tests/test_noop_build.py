"""A no-op build reads and writes nothing and says nothing about the configuration; a strict
build right after it reads nothing either, yet still fails on every problem of the book."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
STRICT = ["-W", "--keep-going", "-D", "atlas_strict_allow=upstream.missing"]
CHECK = [*STRICT, "-D", "atlas_upstream_lock=frozen"]


def build(src: Path, out: Path, *options: str) -> tuple[int, str]:
    """``sphinx-build -M html`` as make runs it (not quiet: Sphinx's own counts are read)."""
    cmd = [sys.executable, "-m", "sphinx", "-M", "html", str(src), str(out), *options]
    env = {**os.environ, "ATLAS_BOOK_CONF": str(REPO / "conf.py")}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    # Where the terminal looks capable (CI=true makes Sphinx colour its output), progress is
    # redrawn in place: drop every escape sequence and turn carriage returns into line ends.
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", proc.stdout + proc.stderr)
    return proc.returncode, text.replace("\r", "\n")


def read_and_written(log: str) -> tuple[int, int]:
    """Documents read and pages written, by Sphinx's own counts."""
    env = re.search(r"updating environment: (?:\[[^\]]*\] )?(\d+) added, (\d+) changed", log)
    assert env, log
    written = len(re.findall(r"^writing output\.\.\. \[\s*\d+%\]", log, re.M))
    return int(env.group(1)) + int(env.group(2)), written


def problems(log: str) -> list[str]:
    return sorted(
        re.sub(r"^.*?(\w+\.md:\d+)", r"\1", line)
        for line in log.splitlines()
        if re.search(r"\.md:\d+: (WARNING|ERROR):", line)
    )


@pytest.fixture
def book(tmp_path: Path, rootdir: Path) -> Path:
    return shutil.copytree(rootdir / "test-noop", tmp_path / "book")


def test_noop_html_reads_and_writes_nothing(book: Path) -> None:
    out = book / "_build"
    status, first = build(book, out)
    assert status == 0, first
    assert read_and_written(first) == (3, 3)
    status, again = build(book, out)
    assert status == 0
    assert read_and_written(again) == (0, 0)
    assert "The configuration has changed" not in again
    # the problems of the pages it did not read are reported again, word for word
    assert problems(again) == problems(first) and len(problems(first)) == 2


def test_check_after_html_reads_nothing_and_still_fails(book: Path) -> None:
    out = book / "_build"
    build(book, out)
    status, check = build(book, out, *CHECK)
    assert read_and_written(check) == (0, 0)
    assert status == 1, check
    assert problems(check) == [
        "flawed.md:3: ERROR: link to page 'nowhere', which does not exist (renamed or removed?): "
        "point it at an existing page or remove it [atlas.links.doc]",
        "flawed.md:6: WARNING: 'note': Unknown option key: 'unknown-option' (allowed: "
        "['class', 'collapsible', 'name']) [myst.directive_option]",
    ]
    assert "2 warnings (with warnings treated as errors)" in check
    # and back to html: still nothing to read
    status, html = build(book, out)
    assert status == 0 and read_and_written(html) == (0, 0)
    # fixed, the page is read again and the problems are gone, in html and in check
    (book / "flawed.md").write_text("# A page with no flaw left\n")
    status, html = build(book, out)
    assert status == 0 and read_and_written(html)[0] == 1 and problems(html) == []
    status, check = build(book, out, *CHECK)
    assert status == 0, check
    assert read_and_written(check) == (0, 0)


def test_allowed_warning_types_are_not_counted(book: Path) -> None:
    out = book / "_build"
    (book / "flawed.md").write_text("# F\n\n```{note}\n:unknown-option: x\nA note.\n```\n")
    build(book, out)
    status, check = build(book, out, *STRICT, "-D", "atlas_strict_allow=myst,upstream")
    assert status == 0, check
    assert read_and_written(check) == (0, 0)
    assert problems(check) == []


def test_a_page_with_a_wrong_citation_is_not_reread_while_nothing_outside_changes(
    make_app, tmp_path: Path, rootdir: Path, fixture_git_config
) -> None:
    from io import StringIO

    from gitfixtures import FixtureUpstream, make_book, stores_dir
    from upstream_demo import make_demo

    demo = make_demo(tmp_path / "demo")
    root = shutil.copytree(rootdir / "test-upstream", tmp_path / "book")
    (root / "index.md").write_text("# P\n\n```{upstream} demo pkg/net.py:99\n```\n")
    make_book(root, {}, {"demo": FixtureUpstream(demo, pin=demo.head)})
    stores = stores_dir(tmp_path / "stores", {"demo": demo})

    def again(stores_root: Path):
        status = StringIO()
        app = make_app(
            "html", srcdir=root, status=status, warning=StringIO(),
            confoverrides={"atlas_upstreams_root": str(stores_root)},
        )  # fmt: skip
        app.build()
        log = re.sub(r"\x1b\[[0-9;]*m", "", status.getvalue() + app.warning.getvalue())
        app.cleanup()
        return app.statuscode, log

    status, log = again(stores)
    assert status == 1 and "run past the end of pkg/net.py" in log
    status, log = again(stores)  # nothing changed: nothing read, the error still reported
    assert "0 added, 0 changed, 0 removed" in log
    assert status == 1 and "index.md:3: ERROR: upstream citation" in log
    assert "run past the end of pkg/net.py" in log
    pack = demo.git_dir / "objects" / "pack"  # a fetch brings a pack: the page is re-read
    os.utime(pack, ns=(pack.stat().st_atime_ns, pack.stat().st_mtime_ns + 10**9))
    status, log = again(stores)
    assert "0 added, 1 changed, 0 removed" in log and status == 1
