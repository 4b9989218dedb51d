"""A broken project file gets one clean error: the file, the line where known, what is wrong and
the fix; a non-zero exit; no traceback, no versions block, no request to report to Sphinx."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from gitfixtures import FixtureUpstream, git, make_book, make_repo

REPO = Path(__file__).resolve().parents[2]
CONF = """\
import os, runpy
globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
bibtex_bibfiles = ["refs.bib"]
"""
GOOD_BIB = """\
@misc{good2020paper,
  author = {Good, Gus},
  title  = {A Well-Formed Entry},
  year   = {2020},
  url    = {https://example.org/good},
}
"""
CRASH_REPORT = (
    "Traceback",
    "Versions",
    "sphinx-doc/sphinx",
    "Extension error",
    "Configuration error",
)

pytestmark = pytest.mark.usefixtures("fixture_git_config")


@pytest.fixture
def book(tmp_path: Path) -> Path:
    up = make_repo(tmp_path / "up", [{"a.py": "a = 1\n"}])
    return make_book(
        tmp_path / "book",
        {"conf.py": CONF, "index.md": "# P\n\nText.\n", "refs.bib": GOOD_BIB},
        {"up": FixtureUpstream(up, pin=up.head, url="https://github.com/fixture/up")},
    )


def build(book: Path, *options: str) -> tuple[int, list[str]]:
    """The build, run from the book's folder as make runs it; its stderr lines (no colour)."""
    cmd = [sys.executable, "-m", "sphinx", "-M", "html", ".", "_build", "-q", *options]
    env = dict(os.environ)  # ATLAS_BOOK_CONF: the fixtures' settings (conftest.py)
    proc = subprocess.run(cmd, cwd=book, capture_output=True, text=True, env=env, timeout=300)
    err = re.sub(r"\x1b\[[0-9;]*m", "", proc.stderr)
    for phrase in CRASH_REPORT:
        assert phrase not in err, err
    return proc.returncode, [line for line in err.splitlines() if line.strip()]


def python() -> str:
    return sys.executable


def test_the_book_builds(book: Path) -> None:
    assert build(book) == (0, [])


def test_corrupt_lock(book: Path) -> None:
    lock = book / "upstreams.lock"
    lock.write_text(json.dumps({"citations": {}, "version": 1}, indent=2) + "\n>>>>>>> theirs\n")
    status, err = build(book)
    assert status == 2
    assert err == [
        "upstreams.lock:5: ERROR: not a valid lock (Extra data); restore it with "
        "`git checkout -- upstreams.lock`, or rebuild it from the pages with "
        f"`{python()} -m atlas.upstream lock --source .`"
    ]
    # the command works as printed, from where the build ran
    proc = subprocess.run(
        [python(), "-m", "atlas.upstream", "lock", "--source", "."], cwd=book, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr
    assert build(book)[0] == 0


def test_bib_syntax_error_names_the_file_and_line(book: Path) -> None:
    (book / "refs.bib").write_text(
        GOOD_BIB + "\n@misc{open2021paper,\n  title = {Never Closed},\n  url = {https://x.org},\n"
        "\n@misc{next2022paper,\n  title = {Next},\n  url = {https://y.org},\n}\n"
    )
    status, err = build(book)
    assert status == 2
    assert err == [
        "refs.bib:12: ERROR: syntax error: '=' expected (is the entry 'open2021paper' at line 8 "
        "closed with '}'?); fix the entry there"
    ]


def test_bib_premature_end_of_file(book: Path) -> None:
    (book / "refs.bib").write_text(GOOD_BIB + "\n@misc{open2021paper,\n  title = {Never Closed\n")
    status, err = build(book)
    assert status == 2 and len(err) == 1
    assert err[0].startswith("refs.bib:9: ERROR: syntax error: premature end of file")
    assert "(is the entry 'open2021paper' at line 8 closed with '}'?)" in err[0]


@pytest.mark.parametrize(
    ("entry", "line", "message"),
    [
        (
            GOOD_BIB.replace("A Well-Formed Entry", "Again"),
            8,
            "key 'good2020paper' is already defined at line 1: keep one entry (cite the existing "
            "key) or give this work another key",
        ),
        (
            "@misc{bare2021paper,\n  author = {Bare, Bo},\n  title = {T},\n  year = {2021},\n}\n",
            8,
            "entry 'bare2021paper' has no url field: add url = {the arXiv abs page, "
            "https://doi.org/DOI, or the post} (or doi = {...})",
        ),
        (
            "@misc{badid2021paper,\n  title = {T},\n  eprint = {2113.00001},\n"
            "  archiveprefix = {arXiv},\n  url = {https://example.org/badid},\n}\n",
            10,
            "entry 'badid2021paper': malformed arXiv eprint: '2113.00001' has month 13",
        ),
    ],
    ids=["duplicate-key", "no-url-or-doi", "malformed-arxiv"],
)
def test_bib_rules_are_one_error_at_their_line(
    book: Path, entry: str, line: int, message: str
) -> None:
    (book / "refs.bib").write_text(GOOD_BIB + "\n" + entry)
    status, err = build(book)
    assert status == 1
    assert len(err) == 1, err
    assert err[0].startswith(f"refs.bib:{line}: ERROR: {message}"), err[0]
    assert err[0].endswith("[atlas.refs.bib]")


def test_bad_settings_on_the_command_line(book: Path) -> None:
    status, err = build(book, "-D", "atlas_labs_mode=bogus")
    assert (status, err) == (2, [
        "command line: ERROR: -D atlas_labs_mode=bogus: atlas_labs_mode must be one of 'auto', "
        "'force', 'off' (e.g. -D atlas_labs_mode=auto)"
    ])  # fmt: skip
    status, err = build(book, "-D", "atlas_upstream_lock=maybe", "-D", "atlas_labs_timout=9")
    assert status == 2
    assert err == [
        "command line: ERROR: -D atlas_upstream_lock=maybe: atlas_upstream_lock must be one of "
        "'update', 'frozen' (e.g. -D atlas_upstream_lock=update)",
        "command line: ERROR: -D atlas_labs_timout: no such setting; did you mean "
        "atlas_labs_timeout?",
    ]
    # what the rules accept is converted, floats included (Sphinx alone would ignore 30)
    assert build(book, "-D", "atlas_labs_timeout=30", "-D", "atlas_labs_show_times=0")[0] == 0


def test_bad_setting_in_conf_py(book: Path) -> None:
    conf = book / "conf.py"
    conf.write_text(CONF + "atlas_labs_timeout = -1\natlas_lab_seed = 3\n")
    status, err = build(book)
    assert status == 2
    assert err == [
        "conf.py:7: ERROR: atlas_lab_seed: no such setting; did you mean atlas_labs_seed?",
        "conf.py:6: ERROR: atlas_labs_timeout = -1: must be a number > 0; fix it there",
    ]


def test_broken_gitmodules(book: Path) -> None:
    gitmodules = book / ".gitmodules"
    text = gitmodules.read_text()
    gitmodules.write_text(text + '[submodule "half\n')
    status, err = build(book)
    assert status == 2 and len(err) == 1
    line = text.count("\n") + 1
    assert err[0].startswith(f".gitmodules:{line}: ERROR: git cannot read it (bad config line")
    assert err[0].endswith("fix the line, or restore it with `git checkout -- .gitmodules`")


def test_gitlink_without_an_entry_and_entry_without_a_gitlink(book: Path) -> None:
    git(book, "config", "-f", ".gitmodules", "--remove-section", "submodule.up")
    git(book, "config", "-f", ".gitmodules", "submodule.other.path", "upstreams/other")
    git(book, "config", "-f", ".gitmodules", "submodule.other.url", "https://github.com/o/other")
    status, err = build(book)
    assert status == 2
    pin = git(book, "ls-files", "--stage", "upstreams/up").split()[1]
    assert err == [
        f".gitmodules: ERROR: the gitlink upstreams/up (pinned at {pin[:12]}) has no entry here; "
        '[submodule "NAME"] with `path = upstreams/up` and its url, or drop the gitlink with '
        "`git rm --cached upstreams/up`".replace("here; [", "here; add ["),
        '.gitmodules:1: ERROR: [submodule "other"] has no gitlink at upstreams/other, so no '
        "pinned commit; pin it with `git update-index --add --cacheinfo "
        "160000,SHA,upstreams/other`, or mark it link-only (`atlas-link-only-pin = SHA`)",
    ]


def test_missing_or_mismatched_npm_assets(book: Path, tmp_path: Path) -> None:
    status, err = build(book, "-D", f"atlas_node_modules={tmp_path / 'nowhere'}")
    assert status == 2 and len(err) == 1
    assert "the offline assets mermaid/dist/mermaid.min.js, mathjax/es5/tex-mml-chtml.js" in err[0]
    assert err[0].endswith("run `npm ci` in the repository root (`make setup` does it)")
    # a node_modules whose mathjax is not the version package-lock.json locks
    fake = tmp_path / "assets" / "node_modules"
    real = REPO / "node_modules"
    for src in ("mermaid/dist/mermaid.min.js", "mathjax/es5/tex-mml-chtml.js"):
        (fake / src).parent.mkdir(parents=True, exist_ok=True)
        (fake / src).write_text("x")
    for folder in ("output", "input", "a11y", "ui", "sre"):
        (fake / "mathjax" / "es5" / folder).mkdir(parents=True, exist_ok=True)
    (fake / "mathjax" / "package.json").write_text('{"version": "3.0.0"}')
    (fake / "mermaid" / "package.json").write_text((real / "mermaid" / "package.json").read_text())
    (fake.parent / "package-lock.json").write_text((REPO / "package-lock.json").read_text())
    status, err = build(book, "-D", f"atlas_node_modules={fake}")
    assert status == 2
    assert err == [
        f"{fake / 'mathjax'}: ERROR: holds mathjax 3.0.0, but package-lock.json locks 3.2.2; "
        "run `npm ci` in the repository root (`make setup` does it)"
    ]


def test_missing_static_folder(book: Path, tmp_path: Path) -> None:
    status, err = build(book, "-D", f"html_static_path={tmp_path / 'gone'}")
    assert status == 2
    assert err == [
        f"{tmp_path / 'gone'}: ERROR: a static folder the HTML build copies is missing (a broken "
        "install?); reinstall with `make setup` (pip install -e '.[dev]')"
    ]
