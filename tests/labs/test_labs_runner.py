"""The runner on its own: a zygote that cannot start is one clear error, never a hang."""

from __future__ import annotations

from pathlib import Path

import pytest
from atlas.labs.directive import parse_examples
from atlas.labs.model import LabSpec
from atlas.labs.runner import Job, LabRunner, ZygoteError


def test_a_zygote_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'No module named torch' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(ZygoteError, match=r"the lab worker could not start: No module named torch"):
        with LabRunner(tmp_path / "worker.log", python=str(fake)):
            pass


def _job(name: str, text: str, timeout: float = 30.0) -> Job:
    spec = LabSpec(name, 0, "lab", name, text, 1, 1, parse_examples(text, 1), timeout)
    return Job(name, name, [spec])


def test_a_lab_that_kills_the_zygote_ends_the_run_cleanly(tmp_path: Path) -> None:
    killer = _job(
        "killer",
        ">>> import os, signal, time\n>>> os.kill(os.getppid(), signal.SIGKILL); time.sleep(20)\n",
    )
    after = _job("after", ">>> 1\n1\n")
    seen: dict[str, str] = {}
    with LabRunner(tmp_path / "worker.log", jobs=1) as runner:
        for job, page in runner.run([killer, after]):
            seen[job.docname] = page.labs[0].status
    # refused by the sandbox (failed) or done and blamed (crashed); the next page still runs
    assert seen["killer"] in ("failed", "crashed")
    assert seen["after"] == "passed"


def test_timeout_segfault_and_results_in_one_run(tmp_path: Path) -> None:
    jobs = [
        _job("slow", ">>> import time\n>>> time.sleep(30)\n", timeout=0.5),
        _job("fine", ">>> 2 * 21\n42\n"),
        _job("segv", ">>> import ctypes\n>>> ctypes.string_at(0)\n"),
    ]
    with LabRunner(tmp_path / "worker.log", jobs=2) as runner:
        pages = {job.docname: page for job, page in runner.run(jobs)}
    assert pages["fine"].labs[0].status == "passed"
    slow = pages["slow"].labs[0]
    assert (slow.status, slow.failed_example) == ("timeout", 1)
    assert "timed out after 0.5 s in example 2 (line 2: >>> time.sleep(30))" in slow.message
    segv = pages["segv"].labs[0]
    assert (segv.status, segv.failed_example) == ("crashed", 1)
    assert "crashed (killed by signal 11 (SIGSEGV)) in example 2 (line 2" in segv.message
