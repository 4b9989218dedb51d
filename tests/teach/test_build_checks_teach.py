"""Problems and the teaching check refuse what they used to let through silently (issue 35):
an answer checked only on a GPU, a nested problem, a second problem index, a taught name read
through an alias bound in an earlier example."""

from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path

from sphinx.testing.util import SphinxTestApp

LAB = "```{lab} L\n>>> 1\n1\n```\n"
GPU_LAB = "```{lab} On a GPU\n:needs: cuda\n>>> 1\n1\n```\n"


def build_with_page(rootdir: Path, tmp: Path, text: str) -> tuple[Path, str]:
    """The test-teach book with ``ch/problems.md`` replaced by ``text``; labs not run (these
    checks are made when a page is read)."""
    src = tmp / "book"
    shutil.copytree(rootdir / "test-teach", src)
    (src / "ch" / "problems.md").write_text(text)
    warnings = StringIO()
    app = SphinxTestApp(
        "html",
        srcdir=src,
        confoverrides={"atlas_labs_mode": "off"},
        status=StringIO(),
        warning=warnings,
    )
    try:
        app.build()
    finally:
        app.cleanup()
    return Path(app.outdir), warnings.getvalue()


def test_an_answer_checked_only_on_a_gpu_is_an_error(rootdir: Path, tmp_path: Path) -> None:
    _, warnings = build_with_page(
        rootdir,
        tmp_path,
        "# Problems\n\n"
        "::::{problem} GPU only\n:label: p-gpu\n:topic: memory\n"
        ":difficulty: standard\n\nQ.\n\n"  # problem at line 3
        f":::{{solution}}\nA.\n\n{GPU_LAB}:::\n::::\n\n"  # solution at line 10
        "::::{problem} Both\n:label: p-both\n:topic: memory\n"
        ":difficulty: standard\n\nQ.\n\n"
        f":::{{solution}}\nA.\n\n{GPU_LAB}\n{LAB}:::\n::::\n",
    )
    assert re.search(
        r'problems\.md:10: ERROR: the solution of problem "GPU only" has only labs that need a '
        r"device \(:needs: cuda\): a CPU build would publish its answer unchecked; add a lab "
        r"without :needs:",
        warnings,
    ), warnings
    assert '"Both"' not in warnings  # a CPU lab beside the GPU one checks the answer
    assert "Traceback" not in warnings


def test_a_problem_inside_another_is_reported_as_itself(rootdir: Path, tmp_path: Path) -> None:
    _, warnings = build_with_page(
        rootdir,
        tmp_path,
        "# Problems\n\n"
        ":::::{problem} Outer\n:label: p-outer\n:topic: memory\n"
        ":difficulty: standard\n\nQ.\n\n"  # line 3
        f"::::{{solution}}\nA.\n\n{LAB}\n"  # solution at line 10
        "::::{problem} Inner\n:label: p-inner\n:topic: memory\n"
        ":difficulty: standard\n\nQ.\n\n"  # line 18
        f":::{{solution}}\nA.\n\n{LAB}:::\n::::\n::::\n:::::\n",
    )
    assert re.search(
        r'problems\.md:18: ERROR: problem "Inner" is inside problem "Outer" \(line 3\): problems '
        r"do not nest",
        warnings,
    ), warnings
    assert "solution parts" not in warnings  # the outer problem has its one solution
    assert "Traceback" not in warnings


def test_a_second_problem_index_on_a_page_is_an_error(rootdir: Path, tmp_path: Path) -> None:
    out, warnings = build_with_page(
        rootdir,
        tmp_path,
        "# Problems\n\n```{problem-index}\n```\n\nAgain:\n\n```{problem-index}\n```\n",
    )
    assert re.search(
        r"problems\.md:8: ERROR: a second problem-index on this page \(the first is at line 3\)",
        warnings,
    ), warnings
    html = (out / "ch" / "problems.html").read_text(encoding="utf-8")
    listed = re.findall(r"\d+ problems? in \d+ chapters?\.|This book has no problems yet", html)
    assert len(listed) == 1, listed  # the index, once


def test_a_taught_name_read_through_an_earlier_alias_must_be_shown(
    rootdir: Path, tmp_path: Path
) -> None:
    _, warnings = build_with_page(
        rootdir,
        tmp_path,
        "# Problems\n\n"
        "```{lab} Alias in one example, use in the next\n"  # line 3
        ">>> import os, atlas.labkit\n"
        '>>> atlas.labkit.__path__.append(os.environ["ATLAS_TEST_LABKIT"])\n'
        ">>> import atlas.labkit.demo.kernel as k\n"  # line 6
        ">>> from atlas.labkit.demo import kernel\n"
        ">>> k.double(2), kernel.SCALE\n"  # line 8
        "(4, 2)\n"
        "```\n",
    )
    assert re.search(
        r"problems\.md:8: ERROR: lab \"Alias in one example, use in the next\" imports double "
        r"from atlas\.labkit\.demo\.kernel, taught code that this page does not show",
        warnings,
    ), warnings
    assert re.search(r"problems\.md:8: ERROR: .* imports SCALE from atlas\.labkit\.demo", warnings)
