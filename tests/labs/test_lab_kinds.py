"""Lab kinds: a ``check`` lab must assert, a ``model`` lab says it checks nothing.

See atlas.labs.kinds.

The rule is read from the doctest (no lab runs here: ``atlas_labs_mode=off``); the fixture book
``test-lab-kinds`` has a lab of each asserting form, labs that only print, a model lab and a bad
kind.
"""

from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from atlas.labs.directive import parse_examples
from atlas.labs.kinds import MODEL_SENTENCE, assertion_problem, asserts
from atlas.labs.model import ExampleSpec


def example(source: str, want: str) -> ExampleSpec:
    return ExampleSpec(source=source + "\n", want=want + "\n" if want else "", line=1)


@pytest.mark.parametrize(
    ("source", "want"),
    [
        ("torch.allclose(ours, ref)", "True"),
        ("ours == theirs, err < 1e-6", "(True, True)"),
        ("{k: f(k) == g(k) for k in ks}", "{'ddp': True, 'zero-1': True}"),
        ("(a == b).all()", "tensor(True)"),
        ("{n: diff(n) for n in names}", "{'llama-3.1-8b': {}, 'qwen3-8b': {}}"),
        ("worst < 1e-12, len(cache)", "(True, 69)"),
        ("for g in gpus: print(g, agree(g))", "H100 agree: True\nA100 agree: True"),
        ("[n for n in names if ours(n) != theirs(n)]", "[]"),
        ("torch.testing.assert_close(ours, ref)", ""),
        ("assert abs(a - b) < 1e-9", ""),
        ("np.testing.assert_allclose(a, b); a.sum()", "6.0"),
    ],
)
def test_comparisons_in_every_form_count_as_asserting(source: str, want: str) -> None:
    assert asserts(example(source, want))


@pytest.mark.parametrize(
    ("source", "want"),
    [
        ("2 ** 10", "1024"),
        ("round(x, 2), y", "(0.44, 7)"),
        ('print(f"{flops:.3e} FLOPs")', "4.234e+19 FLOPs"),
        ('config["bias"]', "False"),  # a flag's value, no comparison made
        ("results_of(run)", "[]"),  # an empty list of results, no comparison made
        ("print('True positives: 3')", "True positives: 3"),  # the word in a string
        ('int("x")', "Traceback (most recent call last):\nValueError: bad"),
    ],
)
def test_printed_values_do_not_count_as_asserting(source: str, want: str) -> None:
    assert not asserts(example(source, want))


def test_a_comparison_made_in_an_earlier_example_counts_when_its_result_is_shown() -> None:
    examples = parse_examples(
        ">>> bad = [n for n in names if ours(n) != theirs(n)]\n>>> len(names), bad\n(16, [])\n", 1
    )
    assert assertion_problem("check", examples) is None
    assert assertion_problem("check", examples[1:]) is not None  # the comparison is gone


def test_a_model_lab_need_not_assert() -> None:
    examples = parse_examples(">>> 2 ** 10\n1024\n", 1)
    assert assertion_problem("model", examples) is None
    assert "none of its examples asserts" in assertion_problem("check", examples)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, rootdir: Path):
    from sphinx.testing.util import SphinxTestApp

    src = tmp_path_factory.mktemp("kinds") / "book"
    shutil.copytree(rootdir / "test-lab-kinds", src)
    out = {}
    for builder in ("html", "latex"):
        warnings = StringIO()
        app = SphinxTestApp(
            builder,
            srcdir=src,
            builddir=src / "_build" / builder,
            confoverrides={"atlas_labs_mode": "off"},
            status=StringIO(),
            warning=warnings,
        )
        app.build()
        out[builder] = (Path(app.outdir), warnings.getvalue())
        app.cleanup()
    return out


def test_a_check_that_asserts_nothing_is_an_error_at_its_page_and_line(built) -> None:
    _, log = built["html"]
    flagged = re.findall(r"(\S+\.md):(\d+): ERROR: lab \"([^\"]+)\": it is a check", log)
    assert sorted((Path(page).name, int(line), title) for page, line, title in flagged) == [
        ("page.md", 26, "Only prints numbers"),
        ("page.md", 33, "Prints False without comparing"),
        ("page.md", 39, "Only checks that bad input is refused"),
    ]
    assert ":kind: model" in log  # the error says how to mark a lab that only shows our model


def test_an_unknown_kind_is_an_error_that_names_the_kinds(built) -> None:
    _, log = built["html"]
    assert re.search(
        r'models\.md:\d+: ERROR: lab "A kind we do not know": ":kind: guess" is unknown; '
        r'a lab is ":kind: check", ":kind: model"',
        log,
    )
    assert "Traceback" not in log


def test_a_model_lab_shows_a_badge_and_says_it_checks_nothing(built) -> None:
    outdir, _ = built["html"]
    page = (outdir / "models.html").read_text(encoding="utf-8")
    assert 'class="atlas-lab-badge">[model]</span>' in page
    assert MODEL_SENTENCE.replace("'", "&#8217;") in page or MODEL_SENTENCE in page
    checks = (outdir / "checks" / "page.html").read_text(encoding="utf-8")
    assert "atlas-lab-badge" not in checks and "checks them against nothing" not in checks


def test_the_pdf_shows_the_badge_and_the_sentence_too(built) -> None:
    outdir, _ = built["latex"]
    tex = "\n".join(path.read_text(encoding="utf-8") for path in outdir.glob("*.tex"))
    assert r"\DUrole{atlas-lab-badge}{{[}model{]}}" in tex  # "[model]", brackets escaped
    assert "checks them against nothing independent" in tex


def test_the_labs_page_counts_each_kind_per_chapter(built) -> None:
    outdir, _ = built["html"]
    text = re.sub(r"<[^>]+>", " ", (outdir / "labs.html").read_text(encoding="utf-8"))
    text = re.sub(r"\s+", " ", text)
    assert "6 checks compare with something independent of the code they check" in text
    assert "1 model shows our own model" in text
    assert "Chapter Checks Models checks 6 0 Models 0 1 " in text
