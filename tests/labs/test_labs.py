"""Labs in a fixture book: pass, fail at the right line, timeout, crash, xfail/xpass, skip, ranks.

The whole fixture book is built once (module scope): one zygote, every page in its own worker.
"""

from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path
from xml.etree import ElementTree

import pytest
from atlas.labs.cache import device
from sphinx.testing.util import SphinxTestApp


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory, rootdir: Path):
    src = tmp_path_factory.mktemp("labs") / "book"
    shutil.copytree(rootdir / "test-labs", src)
    warnings = StringIO()
    app = SphinxTestApp(
        "html",
        srcdir=src,
        confoverrides={"atlas_labs_memory_limit_mb": 4096},
        status=StringIO(),
        warning=warnings,
    )
    app.build()
    yield app, warnings.getvalue()
    app.cleanup()


def html(app: SphinxTestApp, page: str) -> str:
    return (Path(app.outdir) / f"{page}.html").read_text(encoding="utf-8")


def text(app: SphinxTestApp, page: str) -> str:
    """The page's visible text, tags stripped, entities of the prompts decoded."""
    raw = re.sub(r"<[^>]+>", "", html(app, page))
    return raw.replace("&gt;", ">").replace("&lt;", "<").replace("&#183;", "·")


def test_passing_labs_render_code_output_and_status(book) -> None:
    app, warnings = book
    page = text(app, "passing")
    assert ">>> x + 2\n42" in page
    assert re.search(r"passed · \d+\.\d\d(\s|&#160;|&nbsp;)s · torch \d+\.\d+\.\d+ · CPU", page)
    assert "passing.md" not in warnings


def test_labs_are_seeded_and_single_threaded(book) -> None:
    app, warnings = book
    # passing.md's first lab re-seeds with 0 and draws again: equal only if the lab was seeded.
    assert "passing.md" not in warnings
    assert ">>> torch.get_num_threads()\n1" in text(app, "passing")


def test_four_rank_lab_passes_and_shares_the_page_namespace(book) -> None:
    app, warnings = book
    page = text(app, "passing")
    assert "[6.0, 6.0, 6.0, 6.0]" in page
    assert page.count("passed · ") == 2  # the second lab saw x from the first


def test_failing_lab_is_an_error_at_the_failing_example_line(book) -> None:
    app, warnings = book
    # failing.md: the directive is on line 3, ">>> 2 + 2" (the example that fails) on line 6.
    assert re.search(r"failing\.md:6: ERROR: lab \"Wrong claim\" FAILED at example 2:", warnings)
    assert "[lab.fail]" in warnings
    page = text(app, "failing")
    assert "Example 2 (line 6) printed something else" in page
    assert re.search(r"Expected:\s*5\s*Got:\s*4", page)
    assert "FAILED · " in page


def test_timeout_names_the_hung_example_and_the_build_goes_on(book) -> None:
    app, warnings = book
    assert re.search(
        r"hang\.md:7: ERROR: .* timed out after 1 s in example 2 \(line 7: >>> time\.sleep\(60\)\)",
        warnings,
    )
    assert "[lab.timeout]" in warnings
    page = text(app, "hang")
    assert "TIMED OUT" in page
    assert "not run: an earlier lab of this page ended its session" in page
    assert (Path(app.outdir) / "labs.html").exists()  # pages after it were still built


def test_crash_is_reported_as_a_crash_with_its_exit_status(book) -> None:
    app, warnings = book
    assert re.search(r"crash\.md:5: ERROR: .*crashed \(exit status 3\) in example 2", warnings)
    assert "[lab.crash]" in warnings


def test_out_of_memory_under_the_cap_is_reported_as_such(book) -> None:
    app, warnings = book
    assert re.search(
        r"memory\.md:5: ERROR: .*out of memory under the worker's memory cap", warnings
    )


def test_expect_failure_is_strict(book) -> None:
    app, warnings = book
    assert "expected.md:5" not in warnings  # the false claim failed, as expected
    assert re.search(r"expected\.md:10: ERROR: .*marked as an expected failure", warnings)
    assert "[lab.xpass]" in warnings
    assert "failed as expected · " in text(app, "expected")


@pytest.mark.skipif(device() != "cpu", reason="this machine has a GPU: the lab runs")
def test_needs_cuda_is_skipped_visibly_without_a_gpu(book) -> None:
    app, warnings = book
    assert "Needs a GPU" not in warnings  # a hardware skip is no warning
    page = text(app, "skip")
    assert "Skipped: needs CUDA, and this machine has no GPU." in page


def test_a_lab_that_raises_skiptest_is_skipped_visibly_not_failed(book) -> None:
    """How a lab whose prerequisite is absent (upstream objects it runs) says so: visibly on
    the page, and as a warning of its own type (a skip is not a pass), never as an error."""
    app, warnings = book
    assert "Skipped: the fixture's prerequisite is absent." in text(app, "skip")
    skips = [line for line in warnings.splitlines() if "skip.md" in line]
    assert len(skips) == 1  # the SkipTest lab; the :needs: cuda lab is not reported
    assert re.search(
        r"skip\.md:\d+: WARNING: lab \"Needs something this machine lacks\" skipped: "
        r"the fixture's prerequisite is absent\..*\[lab\.skipped\]",
        skips[0],
    )
    assert "ERROR" not in skips[0]  # the example after the skip never ran


def test_exception_on_one_rank_reaches_the_lab_with_its_traceback(book) -> None:
    app, warnings = book
    assert "ranks.md" not in warnings  # the expected RankError, rank 3, ValueError matched
    assert "passed · " in text(app, "ranks")


def test_hide_output_hides_the_output(book) -> None:
    app, _ = book
    page = text(app, "hidden")
    assert 'print("secret-output-value")' in page
    assert "\nsecret-output-value" not in page


def test_labs_page_lists_every_lab_with_links(book) -> None:
    app, _ = book
    page = html(app, "labs")
    summary = (
        "13 labs on 9 pages (4 passed, 1 failed, 1 passed unexpectedly, 1 timed out, "
        "2 crashed, 1 failed as expected, 2 skipped, 1 not run)"
    )
    assert summary in text(app, "labs")
    assert 'href="failing.html#lab-wrong-claim"' in page
    assert page.count('<tr class="atlas-lab-') == 13


def test_junit_report_counts_failures_errors_and_skips(book) -> None:
    app, _ = book
    root = ElementTree.parse(Path(app.outdir).parent / "labs" / "junit.xml").getroot()
    assert root.get("tests") == "13"
    failures = {
        case.get("name") for case in root.iter("testcase") if case.find("failure") is not None
    }
    assert failures == {"Wrong claim", "A claim marked false that holds"}
    wrong = next(case for case in root.iter("testcase") if case.get("name") == "Wrong claim")
    assert (wrong.get("file"), wrong.get("line")) == ("failing.md", "6")
    errors = {case.get("name") for case in root.iter("testcase") if case.find("error") is not None}
    assert errors == {"Sleeps past its timeout", "Exits the worker", "Allocates past the cap"}


def test_only_deterministic_outcomes_are_cached(book) -> None:
    app, _ = book
    cached = list((Path(app.outdir).parent / ".labs-cache").glob("*.json"))
    # 9 pages with labs; hang, crash and memory are not cached: the next build retries them.
    assert len(cached) == 6


def test_bad_lab_input_is_one_error_each_with_line_and_fix(make_app, tmp_path, rootdir) -> None:
    src = tmp_path / "book"
    shutil.copytree(rootdir / "test-labs-errors", src)
    warnings = StringIO()
    app = make_app("html", srcdir=src, warning=warnings, status=StringIO())
    app.build()
    log = warnings.getvalue()
    assert (
        'bad.md:3: ERROR: lab "Asks for hardware we do not know": ":needs: tpu" is unknown; '
        'the labs know ":needs: cuda".' in log
    )
    assert re.search(r"bad\.md:10: ERROR: lab \"Has no examples\" has no \">>>\" examples", log)
    assert re.search(r"bad\.md:15: ERROR: .*line 15: lacks blank after >>>", log)
    assert log.count("ERROR") == 3
    assert not list((src / "_build" / ".labs-cache").glob("*.json"))  # nothing ran
    assert "Traceback" not in log


def test_latex_labs_table_links_to_labels_that_exist(make_app, tmp_path, rootdir) -> None:
    src = tmp_path / "book"
    shutil.copytree(rootdir / "test-labs-parallel", src)
    app = make_app("latex", srcdir=src, status=StringIO(), warning=StringIO())
    app.build()
    tex = "\n".join(path.read_text() for path in Path(app.outdir).glob("*.tex"))
    links = set(re.findall(r"\\hyperref\[\\detokenize\{(p\d:lab-[^}]+)\}\]", tex))
    labels = set(re.findall(r"\\label\{\\detokenize\{(p\d:lab-[^}]+)\}\}", tex))
    assert len(links) == 12
    assert links <= labels
    assert tex.count(r"\sphinxstyleemphasis{passed") == 12  # each lab's status line
    assert "not run" not in tex
