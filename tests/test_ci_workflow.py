"""Hosted CI builds everything .ci/run builds, on every push and pull request, keeps the HTML
and the PDF, and publishes both on main."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def workflow() -> dict:
    return yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8"))


def test_runs_on_every_push_and_pull_request() -> None:
    triggers = workflow()[True]  # YAML 1.1 reads the key `on` as True
    assert "push" in triggers and "pull_request" in triggers
    assert (triggers["push"] or {}).get("branches") is None  # every branch


def test_the_steps_are_those_of_ci_run() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for step in ("apt-get install", "make setup", "make upstreams", "make lint", "make test\n",
                 "make test-slow", "make check", "make pdf"):  # fmt: skip
        assert step in script, step
    runs = [s.get("run", "") for s in workflow()["jobs"]["build"]["steps"]]
    assert ".ci/run" in runs


def test_the_real_books_build_follows_the_strict_build() -> None:
    """The slow test seeds its build with `make check`'s lab cache (tests/test_book.py): run
    before it, every lab of the book would run twice in CI."""
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert script.index("make check") < script.index("make test-slow")


def test_pip_and_npm_caches() -> None:
    steps = workflow()["jobs"]["build"]["steps"]
    node = next(s for s in steps if str(s.get("uses", "")).startswith("actions/setup-node"))
    assert node["with"]["cache"] == "npm"
    caches = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache")]
    assert any("pip" in s["with"]["path"] and "pyproject.toml" in s["with"]["key"] for s in caches)
    pip_cache = workflow()["jobs"]["build"]["env"]["PIP_CACHE_DIR"]
    assert pip_cache in [s["with"]["path"] for s in caches]


def test_html_and_pdf_are_artifacts_and_published_on_main() -> None:
    jobs = workflow()["jobs"]
    uploads = {
        s["with"]["name"]: s["with"]["path"]
        for s in jobs["build"]["steps"]
        if str(s.get("uses", "")).startswith("actions/upload-artifact")
    }
    assert uploads == {"html": "_build/html", "pdf": "_build/pdf/atlas.pdf"}
    pages = [s for s in jobs["build"]["steps"] if "upload-pages-artifact" in str(s.get("uses"))]
    assert len(pages) == 1 and "refs/heads/main" in pages[0]["if"]
    site = next(s for s in jobs["build"]["steps"] if s.get("name", "").startswith("Site for"))
    assert "atlas.pdf" in site["run"] and "_build/html" in site["run"]
    publish = jobs["publish"]
    assert publish["needs"] == "build" and "refs/heads/main" in publish["if"]
    assert publish["permissions"] == {"pages": "write", "id-token": "write"}
    assert publish["steps"][0]["uses"].startswith("actions/deploy-pages")


def test_make_test_is_parallel_and_ci_runs_the_slow_tests_it_leaves_out() -> None:
    """`make test` leaves out the tests marked slow, and `make test-slow` (a CI step) selects
    them: were no test marked slow, pytest would exit 5 ("no tests ran") and fail CI at that
    step, so the mark must stay on the real book's build."""
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    test = re.search(r"^test: .*\n\t(.+)$", make, re.M).group(1)
    slow = re.search(r"^test-slow: .*\n\t(.+)$", make, re.M).group(1)
    assert "-n $(TEST_WORKERS)" in test and '-m "not slow"' in test
    assert slow.endswith("-m slow")
    marked = [
        p.relative_to(REPO).as_posix()
        for p in (REPO / "tests").rglob("test_*.py")
        if re.search(r"^@pytest\.mark\.slow$", p.read_text(encoding="utf-8"), re.M)
    ]
    assert "tests/test_book.py" in marked


def test_lint_checks_and_formatting_of_the_whole_tree() -> None:
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    lint = re.search(r"^lint: .*\n((?:\t.+\n)+)", make, re.M).group(1)
    assert "ruff check .\n" in lint and "ruff format --check .\n" in lint
