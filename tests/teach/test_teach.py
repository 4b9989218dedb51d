"""Labs that teach (atlas.teach): labcode, problems and solutions, the teaching check, the
runnable lab files, and the lab cache keyed on what a page's labs import.

The fixture books (tests/roots/test-teach*) carry a small labkit of their own, so that line
numbers stay put; their labs append it to ``atlas.labkit.__path__`` to import from it.
"""

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
from atlas.labs.cache import imports_digest
from atlas.labs.directive import parse_examples
from atlas.labs.model import LabSpec
from docutils import nodes
from sphinx.testing.util import SphinxTestApp

REPO = Path(__file__).resolve().parents[2]


def build(src: Path, builder: str = "html", **overrides: object) -> tuple[SphinxTestApp, str]:
    warnings = StringIO()
    app = SphinxTestApp(
        builder, srcdir=src, confoverrides=overrides, status=StringIO(), warning=warnings
    )
    try:
        app.build()
    finally:
        app.cleanup()
    return app, warnings.getvalue()


def copy_book(rootdir: Path, tmp: Path, name: str = "test-teach") -> Path:
    src = tmp / name
    shutil.copytree(rootdir / name, src)
    return src


@pytest.fixture(scope="module")
def teach_book(tmp_path_factory: pytest.TempPathFactory, rootdir: Path):
    src = copy_book(rootdir, tmp_path_factory.mktemp("teach"))
    os.environ["ATLAS_TEST_LABKIT"] = str(src / "labkit")  # inherited by the lab workers
    app, warnings = build(src)
    yield src, app, warnings


def page(app: SphinxTestApp, name: str) -> str:
    return (Path(app.outdir) / f"{name}.html").read_text(encoding="utf-8")


# -- labcode ------------------------------------------------------------------------------------
def test_labcode_shows_real_line_numbers_and_links_the_file(teach_book) -> None:
    src, app, _ = teach_book
    html = page(app, "labcode")
    # demo/kernel.py::double is lines 8-10 of the file, numbered as such, line 10 emphasized
    assert re.search(r'linenos">\s*8</span><span class="k">def</span>', html)
    assert re.search(r'<span class="hll"><span class="linenos">10</span>', html)
    assert "ext/atlas/labkit/demo/kernel.py · double · L8–L10" in html
    assert "ext/atlas/labkit/demo/kernel.py · Accumulator.add · L19–L21" in html
    assert "The scale — " in html and "kernel.py · L5–L6" in html
    assert 'href="_labkit/demo/kernel.py"' in html
    copied = Path(app.outdir) / "_labkit" / "demo" / "kernel.py"
    assert copied.read_bytes() == (src / "labkit" / "demo" / "kernel.py").read_bytes()
    doctree = app.env.get_doctree("labcode")
    starts = [b["highlight_args"]["linenostart"] for b in doctree.findall(nodes.literal_block)]
    assert starts == [8, 19, 5, 5, 8]
    # rendered by upstream's renderer: its elision words, and code shown as is (force)
    assert "\u22ee 2 lines not shown (L6\u2013L7)" in html
    assert all(b["force"] for b in doctree.findall(nodes.literal_block))


def test_labcode_role_is_a_checked_link(teach_book) -> None:
    _, app, _ = teach_book
    html = page(app, "labcode")
    assert re.search(
        r'<a class="labcode-link labcode-ref reference external" href="_labkit/demo/kernel.py"'
        r"[^>]*><code[^>]*><span class=\"pre\">kernel.py::Accumulator</span>",
        html,
    )


def test_bad_labcode_is_one_error_each_at_its_line(tmp_path: Path, rootdir: Path) -> None:
    src = copy_book(rootdir, tmp_path)
    (src / "labcode.md").write_text(
        "# Bad\n\n"
        "```{labcode} demo/kernel.py::doubel\n```\n\n"  # line 3
        "```{labcode} demo/kernel.py:20-40\n```\n\n"  # line 6
        "```{labcode} demo/kernel.py:5-6\n:contains: nothere\n```\n\n"  # line 9
        "```{labcode} demo/kernl.py::double\n```\n\n"  # line 13
        "```{labcode} demo/kernel.py::double\nx = 1\n```\n\n"  # line 16
        "Inline {labcode}`demo/kernel.py::nope`.\n"  # line 20
    )
    app, warnings = build(src, atlas_labs_mode="off")
    errors = [line for line in warnings.splitlines() if "[labcode.error]" in line]
    assert len(errors) == 6, warnings
    expected = {
        3: "symbol 'doubel' is not defined in ext/atlas/labkit/demo/kernel.py; nearest: double",
        6: "lines 20-40 run past the end of ext/atlas/labkit/demo/kernel.py, which has 21 lines",
        9: ":contains: 'nothere' is not in the selection (lines 5-6)",
        13: "ext/atlas/labkit/demo/kernl.py does not exist; nearest: demo/kernel.py",
        16: "the labcode directive takes no content",
        20: "symbol 'nope' is not defined",
    }
    for line, message in expected.items():
        assert any(f"labcode.md:{line}: ERROR" in e and message in e for e in errors), message
    assert "Traceback" not in warnings
    assert app.statuscode == 1  # a book that quotes wrong code must not publish


def test_editing_the_quoted_file_re_renders_the_page(tmp_path: Path, rootdir: Path) -> None:
    src = copy_book(rootdir, tmp_path)
    app, _ = build(src, atlas_labs_mode="off")
    assert "double · L8–L10" in page(app, "labcode")
    kernel = src / "labkit" / "demo" / "kernel.py"
    kernel.write_text('"""A line more."""\n' + kernel.read_text())
    future = time.time() + 5
    os.utime(kernel, (future, future))
    app, _ = build(src, atlas_labs_mode="off")
    assert "double · L9–L11" in page(app, "labcode")


# -- problems -----------------------------------------------------------------------------------
def test_a_wrong_answer_fails_the_build_at_its_line(teach_book) -> None:
    _, _, warnings = teach_book
    assert re.search(
        r'ch/problems\.md:32: ERROR: lab "The product, computed" FAILED at example 1:', warnings
    )
    assert 'lab "The answer, computed"' not in warnings  # the right answer passes


def test_solution_is_a_collapsed_dropdown_under_its_question(teach_book) -> None:
    _, app, _ = teach_book
    html = page(app, "ch/problems")
    assert 'id="problem-demo-double"' in html
    assert "Problem 1: Twice twenty-one" in html and "(compute)" in html
    details = re.findall(r"<details[^>]*>", html)
    assert len(details) == 2 and all("open" not in d for d in details)
    assert all("atlas-solution" in d for d in details)
    question = html.index("What is twice 21?")
    assert question < html.index("<details") < html.index("Add 21 to itself.")


def test_problem_index_lists_every_problem_by_chapter_and_topic(teach_book) -> None:
    _, app, _ = teach_book
    html = page(app, "bank")
    assert "2 problems in 1 chapter." in html
    assert re.search(r'rubric"><a class="reference internal" href="ch/index.html">A chapter', html)
    assert "(<em>compute</em>)" in html  # each problem on its own line, with its topic
    assert 'href="ch/problems.html#problem-demo-double">Twice twenty-one</a>' in html
    assert 'href="ch/problems.html#problem-demo-wrong">A wrong answer</a>' in html


def test_pdf_gathers_answers_at_the_chapter_end_with_links_both_ways(
    tmp_path: Path, rootdir: Path
) -> None:
    src = copy_book(rootdir, tmp_path)
    os.environ["ATLAS_TEST_LABKIT"] = str(src / "labkit")
    app, _ = build(src, "latex")
    tex = (Path(app.outdir) / "atlas.tex").read_text(encoding="utf-8")
    answers = tex.index(r"\section{Answers}")
    question = tex.index("What is twice 21?")
    worked = tex.index("Add 21 to itself.")
    assert question < answers < worked  # the worked answer moved to the end of the chapter
    # the question links to its answer, the answer back to its question
    assert r"\hyperref[\detokenize{ch/index:answer-demo-double}]" in tex[:answers]
    assert r"\label{\detokenize{ch/index:answer-demo-double}}" in tex[answers:]
    assert r"\hyperref[\detokenize{ch/problems:problem-demo-double}]" in tex[answers:]
    assert r"\label{\detokenize{ch/problems:problem-demo-double}}" in tex[:answers]
    assert r"\begin{sphinxuseclass}{atlas-lab-passed}" in tex[answers:]  # the lab moved along


def test_malformed_problems_are_errors_with_the_fix(tmp_path: Path, rootdir: Path) -> None:
    src = copy_book(rootdir, tmp_path)
    (src / "ch" / "problems.md").write_text(
        "# Problems\n\n"
        "::::{problem} No solution\n:label: p-one\n:topic: memory\n"
        ":difficulty: standard\n\nQ.\n::::\n\n"  # line 3
        "::::{problem} No lab\n:label: p-two\n:topic: memory\n"
        ":difficulty: standard\n\nQ.\n\n"  # line 11
        ":::{solution}\nJust words.\n:::\n::::\n\n"  # solution at line 18
        ":::{solution}\nAlone.\n:::\n\n"  # line 23
        "::::{problem} No label\n:topic: memory\n"
        ":difficulty: standard\n\nQ.\n::::\n\n"  # line 27
        "::::{problem} Fine\n:label: p-ok\n:topic: memory\n"
        ":difficulty: standard\n\nQ.\n\n"  # line 34
        ":::{solution}\nA.\n\n```{lab} L\n>>> 1\n1\n```\n:::\n::::\n\n"
        "::::{problem} Twice\n:label: p-ok\n:topic: memory\n"
        ":difficulty: standard\n\nQ.\n\n"  # line 51
        ":::{solution}\nA.\n\n```{lab} L\n>>> 1\n1\n```\n:::\n::::\n"
    )
    _, warnings = build(src, atlas_labs_mode="off")
    assert re.search(
        r"problems\.md:3: ERROR: problem \"No solution\" has 0 solution parts", warnings
    )
    assert re.search(
        r'problems\.md:18: ERROR: the solution of problem "No lab" has no lab', warnings
    )
    assert re.search(r"problems\.md:23: ERROR: a solution stands outside a problem", warnings)
    assert re.search(r'problems\.md:27: ERROR: problem "No label" has no :label:', warnings)
    assert re.search(r"problems\.md:51: ERROR: .*:label: p-ok is already used", warnings)
    assert "Traceback" not in warnings


# -- the teaching check -------------------------------------------------------------------------
def test_a_lab_importing_taught_code_its_page_does_not_show_is_an_error(teach_book) -> None:
    _, _, warnings = teach_book
    unshown = [line for line in warnings.splitlines() if "[teach.unshown]" in line]
    messages = "\n".join(w for w in warnings.split("\n") if w)
    assert re.search(
        r"unshown\.md:6: ERROR: lab \"Uses a taught name it does not show\" imports double from "
        r"atlas\.labkit\.demo\.kernel, taught code that this page does not show",
        messages,
    )
    assert "```{labcode} demo/kernel.py::double" in messages  # the fix, ready to paste
    assert "```{labcode} demo/kernel.py::SCALE" in messages
    assert len(unshown) == 2  # double and SCALE; the harness checker may stay hidden
    assert not re.search(r"/shown\.md:\d+: ERROR", messages)  # shown code and harness pass


def test_make_check_fails_on_an_unshown_taught_import(tmp_path: Path, rootdir: Path) -> None:
    src = copy_book(rootdir, tmp_path)
    (src / "index.md").write_text("# Check\n\n```{toctree}\nunshown\n```\n")
    for name in ("labcode.md", "shown.md", "bank.md"):
        (src / name).unlink()
    shutil.rmtree(src / "ch")
    cmd = [sys.executable, "-m", "sphinx", "-M", "html", str(src), str(tmp_path / "out"), "-q"]
    cmd += ["-W", "--keep-going", "-D", "atlas_labs_mode=off"]
    env = dict(os.environ)  # ATLAS_BOOK_CONF: the fixtures' settings (conftest.py)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode != 0
    assert "unshown.md:6: ERROR: lab" in proc.stderr and "[teach.unshown]" in proc.stderr


# -- runnable files -----------------------------------------------------------------------------
def run_file(path: Path, src: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "ext"),
        "ATLAS_TEST_LABKIT": str(src / "labkit"),
    }
    return subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=120, env=env
    )


def test_each_page_with_labs_gets_a_runnable_file_linked_from_its_labs(teach_book) -> None:
    src, app, _ = teach_book
    out = Path(app.outdir)
    assert sorted(p.relative_to(out / "_labs").as_posix() for p in (out / "_labs").rglob("*.py"))
    assert (out / "_labs" / "shown.py").is_file()
    assert 'href="_labs/shown.py">shown.py</a>' in page(app, "shown")
    assert 'checks: <a class="reference external" href="_labkit/demo/harness.py">' in page(
        app, "shown"
    )
    proc = run_file(out / "_labs" / "shown.py", src)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok    Uses what the page shows and the harness" in proc.stdout
    assert proc.stdout.strip().endswith("1 passed, 0 failed, 0 skipped")


def test_the_runnable_file_reports_a_wrong_answer_with_its_page_line(teach_book) -> None:
    src, app, _ = teach_book
    proc = run_file(Path(app.outdir) / "_labs" / "ch" / "problems.py", src)
    assert proc.returncode == 1
    assert "FAIL  The product, computed" in proc.stdout
    assert re.search(r"ch/problems\.md\", line 32", proc.stdout)  # doctest's own report
    assert "Expected:\n    43\nGot:\n    42" in proc.stdout
    assert proc.stdout.strip().endswith("1 passed, 1 failed, 0 skipped")


# -- the lab cache follows imports --------------------------------------------------------------
def _spec(text: str) -> LabSpec:
    return LabSpec("p", 0, "a", "t", text, 1, 1, parse_examples(text, 1), 60.0)


def test_cache_key_covers_the_labkit_files_a_page_imports_transitively(tmp_path: Path) -> None:
    root = tmp_path / "labkit"
    (root / "pkg").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "a.py").write_text("from atlas.labkit.pkg import b\nX = b.Y\n")
    (root / "pkg" / "b.py").write_text("from .c import Z\nY = Z\n")  # relative import
    (root / "pkg" / "c.py").write_text("Z = 1\n")
    (root / "pkg" / "d.py").write_text("W = 2\n")
    uses_a = [_spec(">>> from atlas.labkit.pkg.a import X\n")]
    uses_d = [_spec(">>> import atlas.labkit.pkg.d as d\n>>> d.W\n2\n")]
    no_labkit = [_spec(">>> 1 + 1\n2\n")]
    before = [imports_digest(s, root) for s in (uses_a, uses_d, no_labkit)]
    (root / "pkg" / "c.py").write_text("Z = 3\n")  # reached from a through b
    after_c = [imports_digest(s, root) for s in (uses_a, uses_d, no_labkit)]
    assert after_c[0] != before[0] and after_c[1:] == before[1:]
    (root / "pkg" / "d.py").write_text("W = 4\n")
    after_d = [imports_digest(s, root) for s in (uses_a, uses_d, no_labkit)]
    assert after_d[0] == after_c[0] and after_d[1] != after_c[1] and after_d[2] == before[2]
    (root / "__init__.py").write_text("# the package above every module\n")
    after_init = [imports_digest(s, root) for s in (uses_a, uses_d, no_labkit)]
    assert after_init[0] != after_d[0] and after_init[1] != after_d[1]
    assert after_init[2] == before[2]


def test_editing_one_helper_re_runs_only_the_pages_that_import_it(
    tmp_path: Path, rootdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = copy_book(rootdir, tmp_path, "test-teach-cache")
    # In /dev/shm: the lab sandbox lets labs write there (and in their scratch folder) only.
    counter = Path("/dev/shm") / f"atlas-teach-ran-{os.getpid()}-{tmp_path.name}.txt"
    counter.write_text("")
    monkeypatch.setenv("ATLAS_LABS_COUNTER", str(counter))
    monkeypatch.setenv("ATLAS_TEST_LABKIT", str(src / "labkit"))

    def ran() -> list[str]:
        before = counter.read_text().splitlines()
        _, warnings = build(src)
        assert "ERROR" not in warnings, warnings
        return sorted(counter.read_text().splitlines()[len(before) :])

    def edit(name: str, text: str) -> None:
        path = src / "labkit" / "demo" / name
        path.write_text(text)
        future = time.time() + 5
        os.utime(path, (future, future))

    assert ran() == ["a", "b"]
    assert ran() == []
    edit("helper.py", '"""A helper that kernel.py imports."""\n\nOFFSET = 1  # edited\n')
    assert ran() == ["a"]  # a imports kernel, which imports helper
    edit("other.py", '"""Only b."""\n\nTRIPLE = 3\n')
    assert ran() == ["b"]


# -- which labkit folder ------------------------------------------------------------------------
def test_labkit_root_is_the_setting_else_the_package_folder(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from atlas.labs.imports import LABKIT
    from atlas.teach.config import TeachConfig, labkit_root
    from sphinx.config import Config

    def config(**values: object) -> Config:
        found = Config(values, {})
        TeachConfig.register(SimpleNamespace(add_config_value=found.add))
        return found

    assert labkit_root(config()) == LABKIT == REPO / "ext" / "atlas" / "labkit"
    assert labkit_root(config(atlas_labkit_root=str(tmp_path / "."))) == tmp_path.resolve()


def test_the_runnable_file_reads_the_configured_labkit(tmp_path: Path) -> None:
    from atlas.teach.runnable import render

    (tmp_path / "fixture_only").mkdir()
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "fixture_only" / "__init__.py").write_text("")
    (tmp_path / "fixture_only" / "pinned.py").write_text("from atlas.upstream import spec\n")
    labs = [_spec(">>> from atlas.labkit.fixture_only.pinned import spec\n")]
    note = "Some labs run upstream code read from its git objects"
    assert note in render("p", "T", "p.md", labs, tmp_path)  # it reaches atlas.upstream
    assert note not in render("p", "T", "p.md", labs)  # not in ext/atlas/labkit
