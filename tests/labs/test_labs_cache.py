"""The result cache, the modes, and -j 2: unchanged pages never re-run; force re-runs all."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

import pytest
from atlas.bookroot import BookPaths
from atlas.labs.cache import imports_digest, page_key, upstreams_digest
from atlas.labs.directive import parse_examples
from atlas.labs.execute import _PRESTARTED
from atlas.labs.model import LabSpec
from sphinx.testing.util import SphinxTestApp


@pytest.fixture
def counted_book(tmp_path: Path, rootdir: Path, monkeypatch: pytest.MonkeyPatch):
    """A copy of test-labs-cache whose labs append a line to a counter file when they run."""
    src = tmp_path / "book"
    shutil.copytree(rootdir / "test-labs-cache", src)
    # In /dev/shm: the lab sandbox lets labs write there (and in their scratch folder) only.
    counter = Path("/dev/shm") / f"atlas-labs-ran-{os.getpid()}-{tmp_path.name}.txt"
    counter.touch()
    monkeypatch.setenv("ATLAS_LABS_COUNTER", str(counter))

    def build(**overrides: object) -> tuple[list[str], str]:
        """Build; return which labs ran in this build and the warnings."""
        before = counter.read_text().splitlines()
        warnings = StringIO()
        fresh = bool(overrides.pop("freshenv", False))
        app = SphinxTestApp(
            "html",
            srcdir=src,
            confoverrides=overrides,
            freshenv=fresh,
            status=StringIO(),
            warning=warnings,
        )
        try:
            app.build()
        finally:
            app.cleanup()
        return counter.read_text().splitlines()[len(before) :], warnings.getvalue()

    yield src, build
    counter.unlink(missing_ok=True)


def edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new))
    future = time.time() + 5  # newer than the doctree, whatever the clock's resolution
    os.utime(path, (future, future))


def test_cache_hit_and_miss(counted_book) -> None:
    src, build = counted_book
    ran, warnings = build()
    assert sorted(ran) == ["counted", "other"]
    assert "ERROR" not in warnings

    ran, _ = build()  # nothing changed
    assert ran == []

    edit(src / "other.md", "# Other", "# Other\n\nNew prose, same lab.")
    ran, _ = build()  # page re-read, labs unchanged: served from the cache
    assert ran == []
    assert not _PRESTARTED  # the zygote started while reading was closed unused

    edit(src / "counted.md", ">>> 6 * 7", ">>> 7 * 6")
    ran, _ = build()  # only the page whose lab changed runs
    assert ran == ["counted"]

    ran, _ = build(freshenv=True)  # a fresh environment still finds the on-disk cache
    assert ran == []
    html = (src / "_build" / "html" / "counted.html").read_text()
    assert "passed · " in html


def test_corrupt_cache_entry_is_a_miss(counted_book) -> None:
    src, build = counted_book
    build()
    for entry in (src / "_build" / ".labs-cache").glob("*.json"):
        entry.write_text('{"truncated":')
    ran, warnings = build(freshenv=True)
    assert sorted(ran) == ["counted", "other"]
    assert "Traceback" not in warnings


def test_force_reruns_everything_and_writes_junit(counted_book) -> None:
    src, build = counted_book
    build()
    junit = src / "_build" / "labs" / "junit.xml"
    junit.unlink()
    ran, _ = build(atlas_labs_mode="force")
    assert sorted(ran) == ["counted", "other"]
    ran, _ = build(atlas_labs_mode="force")  # again: force means every time
    assert sorted(ran) == ["counted", "other"]
    assert 'tests="2"' in junit.read_text()


def test_off_runs_nothing_and_says_so(counted_book) -> None:
    src, build = counted_book
    ran, warnings = build(atlas_labs_mode="off")
    assert ran == []
    assert "ERROR" not in warnings
    html = (src / "_build" / "html" / "counted.html").read_text()
    assert "not run" in html and "labs are off in this build (atlas_labs_mode = 'off')" in html


def test_bad_mode_is_a_config_error(counted_book, capsys) -> None:
    _, build = counted_book
    with pytest.raises(SystemExit) as stopped:  # one clean error (atlas.project.config), exit 2
        build(atlas_labs_mode="sometimes")
    assert stopped.value.code == 2
    assert capsys.readouterr().err == (
        "command line: ERROR: -D atlas_labs_mode=sometimes: atlas_labs_mode must be one of "
        "'auto', 'force', 'off' (e.g. -D atlas_labs_mode=auto)\n"
    )


def test_key_covers_labkit_sources_and_lab_text(tmp_path: Path) -> None:
    kit = tmp_path / "labkit"
    kit.mkdir()
    (kit / "ranks.py").write_text("X = 1\n")

    def spec(text: str) -> LabSpec:
        return LabSpec("p", 0, "a", "t", text, 1, 1, parse_examples(text, 1), 60.0)

    page = [spec(">>> from atlas.labkit.ranks import X\n")]
    before = imports_digest(page, kit)
    (kit / "ranks.py").write_text("X = 2\n")
    after = imports_digest(page, kit)
    assert before != after

    one = page_key([spec(">>> 1\n1\n")], before, 0, 0)
    assert one == page_key([spec(">>> 1\n1\n")], before, 0, 0)
    assert one != page_key([spec(">>> 1\n1\n")], after, 0, 0)
    assert one != page_key([spec(">>> 2\n2\n")], before, 0, 0)
    assert one != page_key([spec(">>> 1\n1\n")], before, 1, 0)
    assert one != page_key([spec(">>> 1\n1\n")], before, 0, 0, upstreams="pins moved")


def test_parallel_build_runs_every_page_apart_without_torch_in_sphinx(
    tmp_path: Path, rootdir: Path
) -> None:
    src = tmp_path / "book"
    shutil.copytree(rootdir / "test-labs-parallel", src)
    script = (
        "import sys\n"
        "from sphinx.cmd.build import main\n"
        f"rc = main(['-M', 'html', {str(src)!r}, {str(src / '_build')!r}, '-c', {str(src)!r},"
        " '-j', '2', '-q'])\n"
        "print('torch imported in sphinx:', 'torch' in sys.modules)\n"
        "sys.exit(rc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "torch imported in sphinx: False" in done.stdout
    assert "ERROR" not in done.stderr, done.stderr
    report = re.sub(r"<[^>]+>", "", (src / "_build" / "html" / "labs.html").read_text())
    assert "12 labs on 6 pages (12 passed)" in report


def test_times_can_be_hidden_for_reproducible_pages(counted_book) -> None:
    src, build = counted_book
    build(atlas_labs_show_times=False)
    html = re.sub(r"<[^>]+>", "", (src / "_build" / "html" / "counted.html").read_text())
    assert "passed · torch " in html
    assert not re.search(r"\d+\.\d\d(\s|&#160;|&nbsp;)s", html)


def test_a_crash_is_not_cached_and_is_retried_next_build(counted_book) -> None:
    src, build = counted_book
    (src / "flaky.md").write_text(
        "---\norphan: true\n---\n# Flaky\n\n```{lab} Crashes the first time only\n"
        ">>> import os\n"
        '>>> path = os.environ["ATLAS_LABS_COUNTER"]\n'
        '>>> first = "flaky" not in open(path).read()\n'
        '>>> _ = open(path, "a").write("flaky\\n")\n'
        ">>> if first: os._exit(9)\n```\n"
    )
    ran, warnings = build()
    assert "flaky" in ran
    assert "crashed (exit status 9)" in warnings
    ran, warnings = build()  # nothing changed, but a crash is not a result: run it again
    assert ran == ["flaky"]
    assert "ERROR" not in warnings
    ran, _ = build()  # now it passed, and that is cached
    assert ran == []


def test_key_covers_the_upstream_pins(tmp_path: Path) -> None:
    """Labs run upstream code at the pin: moving a pin must re-run them."""
    book = tmp_path / "book"
    book.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(book), *args], check=True, capture_output=True)

    git("init", "-q")
    (book / ".gitmodules").write_text(
        '[submodule "tool"]\n\tpath = upstreams/tool\n\turl = https://example.org/tool.git\n'
    )
    git("update-index", "--add", "--cacheinfo", f"160000,{'a' * 40},upstreams/tool")
    before = upstreams_digest(BookPaths.at(book))
    assert before == upstreams_digest(BookPaths.at(book))
    git("update-index", "--cacheinfo", f"160000,{'b' * 40},upstreams/tool")
    assert upstreams_digest(BookPaths.at(book)) != before


def test_key_covers_objects_in_the_configured_stores(tmp_path: Path, monkeypatch) -> None:
    """Objects fetched into the ``atlas_upstreams_root`` folder count as objects here."""
    monkeypatch.delenv("ATLAS_UPSTREAMS_ROOT", raising=False)
    book, stores = tmp_path / "book", tmp_path / "stores"
    book.mkdir()
    subprocess.run(["git", "init", "-q", str(book)], check=True)
    (book / ".gitmodules").write_text(
        '[submodule "tool"]\n\tpath = upstreams/tool\n\turl = https://example.org/tool.git\n'
    )
    subprocess.run(["git", "init", "-q", "--bare", str(stores / "tool.git")], check=True)
    without = upstreams_digest(BookPaths.at(book))
    assert upstreams_digest(BookPaths.at(book, stores=stores)) != without
    monkeypatch.setenv("ATLAS_UPSTREAMS_ROOT", str(stores))  # the variable counts too
    assert upstreams_digest(BookPaths.at(book)) != without
