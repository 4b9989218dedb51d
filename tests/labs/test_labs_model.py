"""The labs' data on plain values: the status enum, the one result codec, the one lookup, and
the log and JUnit texts built from them. No build, no torch, no worker."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from xml.etree import ElementTree

import pytest
from atlas.labs.junit import write_junit
from atlas.labs.log import problem_line, problem_text, progress_line, slowest
from atlas.labs.model import (
    ExampleOutcome,
    ExampleResult,
    ExampleSpec,
    LabResult,
    LabSpec,
    LabStatus,
    PageResult,
    environment_of,
    result_of,
)
from atlas.labs.render import STATUS_WORDS, status_line
from atlas.labs.runner import Job
from atlas.labs.table import SUMMARY_WORDS, in_reading_order, rows


def spec(docname: str, index: int, title: str = "", examples: int = 2) -> LabSpec:
    return LabSpec(
        docname=docname,
        index=index,
        anchor=f"lab-{index}",
        title=title or f"lab {index}",
        text="",
        line=10,
        start_line=8,
        examples=tuple(ExampleSpec(f"x{i}", f"{i}\n", 10 + 2 * i) for i in range(examples)),
        timeout=30.0,
    )


FAILED_RESULT = LabResult(
    LabStatus.FAILED,
    1.5,
    [ExampleResult(ExampleOutcome.PASSED), ExampleResult(ExampleOutcome.FAILED, "7\n", 0.25)],
    failed_example=1,
)


def test_statuses_keep_their_words_as_text() -> None:
    # The cache's JSON, JUnit's message, CSS classes and old messages all read these texts.
    assert [status.value for status in LabStatus] == [
        "passed",
        "failed",
        "xfail",
        "xpass",
        "timeout",
        "crashed",
        "skipped",
        "not run",
    ]
    assert LabStatus("not run") is LabStatus.NOT_RUN
    assert f"atlas-lab-{LabStatus.NOT_RUN}" == "atlas-lab-not run"
    assert json.dumps({"status": LabStatus.XPASS}) == '{"status": "xpass"}'
    assert ", ".join(sorted({LabStatus.TIMEOUT, LabStatus.CRASHED})) == "crashed, timeout"
    with pytest.raises(ValueError):
        LabStatus("passed ")


def test_which_statuses_are_fine_and_which_are_cached() -> None:
    fine = {status for status in LabStatus if status.ok}
    cached = {status for status in LabStatus if status.cacheable}
    assert fine == {LabStatus.PASSED, LabStatus.XFAIL, LabStatus.SKIPPED}
    # Timeouts and crashes depend on the machine's mood; "not run" was a choice of this build.
    assert cached == fine | {LabStatus.FAILED, LabStatus.XPASS}
    assert LabResult(LabStatus.XFAIL).ok and not LabResult(LabStatus.XPASS).ok


def test_every_status_has_its_words() -> None:
    assert set(STATUS_WORDS) == set(LabStatus) == set(SUMMARY_WORDS)


def test_a_plain_string_status_becomes_the_enum_and_a_wrong_one_is_refused() -> None:
    result = LabResult("timeout", examples=[ExampleResult("error", "boom")])  # type: ignore[arg-type]
    assert result.status is LabStatus.TIMEOUT
    assert result.examples[0].outcome is ExampleOutcome.ERROR
    with pytest.raises(ValueError):
        LabResult("exploded")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ExampleResult("maybe")  # type: ignore[arg-type]


def test_results_round_trip_through_json_as_builtins_only() -> None:
    data = FAILED_RESULT.to_json()
    # What the worker sends: only builtins, so Sphinx can unpickle it with nothing imported.
    assert type(data["status"]) is str
    assert all(type(example["outcome"]) is str for example in data["examples"])
    assert data == {
        "status": "failed",
        "seconds": 1.5,
        "examples": [
            {"outcome": "passed", "got": "", "seconds": 0.0},
            {"outcome": "failed", "got": "7\n", "seconds": 0.25},
        ],
        "failed_example": 1,
        "message": "",
    }
    assert LabResult.from_json(json.loads(json.dumps(data))) == FAILED_RESULT
    assert LabResult.from_json(pickle.loads(pickle.dumps(data))) == FAILED_RESULT


def test_page_results_round_trip_and_come_back_as_cached() -> None:
    page = PageResult("k", "torch 2.13.0 · CPU", [FAILED_RESULT, LabResult(LabStatus.PASSED)])
    data = page.to_json()
    assert set(data) == {"key", "environment", "labs"}  # "cached" belongs to one build only
    back = PageResult.from_json(json.loads(json.dumps(data)))
    assert (back.key, back.environment, back.labs, back.cached) == (
        "k",
        page.environment,
        page.labs,
        True,
    )
    assert back.cacheable
    assert not PageResult("k", "", [LabResult(LabStatus.CRASHED)]).cacheable


@pytest.mark.parametrize(
    "broken",
    [
        {"key": "k", "environment": ""},
        {"key": "k", "environment": "", "labs": [{"status": "exploded"}]},
        {"key": "k", "environment": "", "labs": [{**FAILED_RESULT.to_json(), "status": "bad"}]},
        {"key": "k", "environment": "", "labs": [{**FAILED_RESULT.to_json(), "examples": [{}]}]},
    ],
)
def test_a_bad_cache_entry_raises_what_the_cache_counts_as_a_miss(broken: dict) -> None:
    with pytest.raises((KeyError, TypeError, ValueError)):
        PageResult.from_json(broken)


def test_a_lab_is_looked_up_on_its_own_page_by_its_index() -> None:
    first, second, other = spec("a", 0), spec("a", 1), spec("b", 0)
    results = {"a": PageResult("k", "torch · CPU", [FAILED_RESULT])}
    assert result_of(results, first) is FAILED_RESULT
    assert result_of(results, second) is None  # the page has fewer results than labs
    assert result_of(results, other) is None  # no result for that page yet
    assert environment_of(results, "a") == "torch · CPU"
    assert environment_of(results, "b") == ""


def test_table_rows_are_in_page_order_with_their_results() -> None:
    specs = {"b": [spec("b", 0)], "a": [spec("a", 0), spec("a", 1)]}
    results = {"a": PageResult("k", "env-a", [FAILED_RESULT])}
    assert [(s.docname, s.index, r, e) for s, r, e in rows(specs, results)] == [
        ("a", 0, FAILED_RESULT, "env-a"),
        ("a", 1, None, "env-a"),
        ("b", 0, None, ""),
    ]


def test_table_rows_follow_the_reading_order_with_unknown_pages_last() -> None:
    specs = {"agents/x": [spec("agents/x", 0)], "hpc/y": [spec("hpc/y", 0)], "z": [spec("z", 0)]}
    rank = {"hpc/y": 0, "agents/x": 1}  # the toctree reads HPC first; "z" is in no toctree
    assert [s.docname for s, _r, _e in rows(specs, {}, rank)] == ["hpc/y", "agents/x", "z"]


def test_the_kinds_table_lists_chapters_in_reading_order() -> None:
    counts = {"agents": {"check": 1}, "hpc": {"check": 2}, "zzz": {"check": 3}}
    rank = {"hpc/index": 0, "hpc/roofline": 1, "agents/index": 2}
    assert list(in_reading_order(counts, rank)) == ["hpc", "agents", "zzz"]


def test_problem_text_and_line_point_at_the_failing_example() -> None:
    lab = spec("a", 0, "Wrong claim")
    assert problem_line(lab, FAILED_RESULT) == 12  # the second example's page line
    assert problem_text(lab, FAILED_RESULT) == (
        'lab "Wrong claim" FAILED at example 2:\n    >>> x1\nExpected:\n    1\nGot:\n    7'
    )
    crashed = LabResult(LabStatus.CRASHED, message="the worker crashed (exit status 3)")
    assert problem_line(lab, crashed) == 8  # no example to blame: the directive's line
    assert (
        problem_text(lab, crashed)
        == 'lab "Wrong claim" CRASHED: the worker crashed (exit status 3)'
    )
    xpass = LabResult(LabStatus.XPASS)
    assert problem_text(lab, xpass).endswith("remove :expect-failure: or make the claim fail again")


def test_progress_and_slowest_lines() -> None:
    page = PageResult("k", "", [FAILED_RESULT, LabResult(LabStatus.TIMEOUT, 2.0)])
    job = Job(
        "serving/scheduler", "k", [spec("serving/scheduler", 0), spec("serving/scheduler", 1)]
    )
    assert progress_line(3, 13, job, page) == (
        "labs [3/13] serving/scheduler: 2 labs, 3.50 s, 2 not fine (failed, timeout)"
    )
    fine = PageResult("k", "", [LabResult(LabStatus.PASSED, 0.8)])
    assert progress_line(1, 1, job, fine).endswith(": 1 lab, 0.80 s, all passed")
    specs = {"serving/scheduler": job.specs}
    assert slowest(specs, {"serving/scheduler": page}, count=1) == [
        "    2.00 s  serving/scheduler: lab 1"
    ]


def test_status_line_words() -> None:
    assert status_line(LabResult(LabStatus.PASSED, 0.41), "torch · CPU") == (
        "passed · 0.41\u00a0s · torch · CPU"
    )
    assert status_line(LabResult(LabStatus.SKIPPED, 0.41), "") == "skipped"


def test_junit_counts_each_kind_once_on_plain_data(tmp_path: Path) -> None:
    specs = {"p": [spec("p", i, f"lab {i}") for i in range(5)], "q": [spec("q", 0, "q lab")]}
    labs = [
        FAILED_RESULT,
        LabResult(LabStatus.TIMEOUT, 30.0, message="timed out"),
        LabResult(LabStatus.SKIPPED, message="needs CUDA"),
        LabResult(LabStatus.XPASS, 0.1),
        LabResult(LabStatus.XFAIL, 0.1),
    ]
    out = tmp_path / "labs" / "junit.xml"
    write_junit(out, specs, {"p": PageResult("k", "", labs)}, lambda docname: f"{docname}.md")
    root = ElementTree.parse(out).getroot()
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "6",
        "failures": "2",  # failed, xpass
        "errors": "1",  # timeout
        "skipped": "2",  # skipped, and q's lab that has no result
    }
    case = {c.get("name"): c for c in root.iter("testcase")}
    failure = case["lab 0"].find("failure")
    assert failure is not None and failure.get("message") == "failed"
    assert (case["lab 0"].get("file"), case["lab 0"].get("line")) == ("p.md", "12")
    assert case["lab 1"].find("error").get("message") == "timeout"
    assert case["lab 4"].find("failure") is None and case["lab 4"].find("error") is None
