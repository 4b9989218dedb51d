"""The project carries its own contributor guide, shown in the book as an appendix, and points
nowhere outside itself."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GUIDE = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")


def test_the_guide_covers_what_a_contributor_needs() -> None:
    headings = re.findall(r"^##+ (.+)$", GUIDE, re.M)
    for needed in (
        "Writing a page",
        "Adding a chapter",
        "The bibliography",
        "Quoting upstream code",
        "Labs",
        "Upstreams: the registry, the lock, adding and moving one",
        "Adding an upstream",
        "Moving a pin",
        "Package upstreams",
        "Labs that teach: labcode and problems",
    ):
        assert needed in headings, needed
    for phrase in ("{chapter-references}", "## References", "Back matter", "::ns::Class::method",
                   "make lock", "STRICT_ALLOW", "{cite:p}`key`", "archiveprefix"):  # fmt: skip
        assert phrase in GUIDE, phrase


def test_every_directive_option_is_documented() -> None:
    sys.path.insert(0, str(REPO / "ext"))
    from atlas.labs.directive import LabDirective
    from atlas.upstream.directive import UpstreamDirective

    for directive in (UpstreamDirective, LabDirective):
        for option in directive.option_spec:
            assert f"`:{option}:" in GUIDE, option


def test_the_pins_table_lists_every_upstream_at_its_pin() -> None:
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-tree", "HEAD", "upstreams/"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    pins = re.findall(r"160000 commit ([0-9a-f]{40})\tupstreams/(\S+)", listed)
    assert len(pins) >= 16
    for sha, name in pins:
        assert re.search(rf"^\| {re.escape(name)} \| [^|]+ \| {sha[:8]} \|", GUIDE, re.M), name


def test_nothing_points_outside_the_project() -> None:
    found = subprocess.run(
        ["git", "-C", str(REPO), "grep", "-n", "-I", "-E", r"shared/|steering repo", "--",
         ".", ":!tests/test_contributing.py"],
        capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert found == ""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(CONTRIBUTING.md)" in readme
    assert re.search(r"^`sudo apt-get install [^`]+`", readme, re.M)  # the PDF and browser tools


def test_the_book_shows_the_guide_as_an_appendix(tmp_path: Path) -> None:
    index = (REPO / "source" / "index.md").read_text(encoding="utf-8")
    back = index.split(":caption: Back matter", 1)[1].split("```", 1)[0]
    assert "making" in back.split()
    book = tmp_path / "book"
    (book / "source").mkdir(parents=True)
    shutil.copy(REPO / "CONTRIBUTING.md", book / "CONTRIBUTING.md")
    shutil.copy(REPO / "source" / "making.md", book / "source" / "making.md")
    (book / "source" / "index.md").write_text("# T\n\n```{toctree}\nmaking\n```\n")
    (book / "conf.py").write_text(
        "import os, runpy\nglobals().update({k: v for k, v in runpy.run_path("
        "os.environ['ATLAS_BOOK_CONF']).items() if k[:2] != '__'})\n"
    )
    env = {**os.environ, "ATLAS_BOOK_CONF": str(REPO / "conf.py")}
    cmd = [sys.executable, "-m", "sphinx", "-M", "html", "source", "_build", "-c", ".", "-q",
           "-W", "--keep-going"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=book, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    html = (book / "_build" / "html" / "making.html").read_text(encoding="utf-8")
    assert "How this book is made" in html and "Adding a chapter" in html
    assert "Labs that teach" in html and "Package upstreams" in html
