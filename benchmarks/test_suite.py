"""Wall time of ``make test`` on two cores, against the same target at a baseline commit.

Each commit is cloned into a temporary folder (so that files being edited meanwhile do not
count) with this checkout's .venv, node_modules and upstream objects, and its own ``ext`` first
on ``PYTHONPATH`` (the editable install points at this checkout's). Each target runs under
``taskset`` on the cores given (two by default: the machine CI runs on), with a JUnit report
from which the counts and the slowest tests are read. ``make test`` at the baseline commit
``fe40244`` (before the suite was split) is plain, serial ``pytest``, the real book's build
included.

Targets: ``make test`` <= 180 s; with ``--ci``, ``.ci/run`` <= 900 s.

Run: ``.venv/bin/python benchmarks/test_suite.py [--rev HEAD] [--baseline REV] [--ci]``. The
last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.etree import ElementTree

REPO = Path(__file__).resolve().parents[1]
# make's own prerequisites are this checkout's (symlinked): never rebuilt by the benchmark
KEEP = ["-o", ".venv/.installed", "-o", "node_modules/.installed"]
LOGS = REPO / "_build" / "test-suite"  # each run's JUnit report and log, kept after the run
TARGET_TEST_S = 180.0
TARGET_CI_S = 900.0


def clone(rev: str, into: Path) -> Path:
    book = into / rev.replace("/", "_")
    subprocess.run(
        ["git", "clone", "-q", "--shared", "--no-checkout", str(REPO), str(book)],
        check=True,
        capture_output=True,
    )
    subprocess.run(["git", "-C", str(book), "checkout", "-q", rev], check=True)
    for name in (".venv", "node_modules"):
        (book / name).symlink_to(REPO / name)
    return book


def junit_summary(report: Path, slowest: int) -> dict[str, object]:
    """Counts and the slowest tests of a pytest JUnit report."""
    if not report.is_file():
        return {"passed": 0, "failed": 0, "skipped": 0, "slowest": []}
    cases = list(ElementTree.parse(report).getroot().iter("testcase"))
    failed = sum(1 for c in cases if c.find("failure") is not None or c.find("error") is not None)
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    timed = sorted(cases, key=lambda c: float(c.get("time", 0)), reverse=True)[:slowest]
    return {
        "passed": len(cases) - failed - skipped,
        "failed": failed,
        "skipped": skipped,
        "slowest": [
            [f"{c.get('classname')}::{c.get('name')}", round(float(c.get("time", 0)), 1)]
            for c in timed
        ],
    }


def upstream_stores() -> Path | None:
    """This checkout's object stores (``make upstreams``), in git's common folder: a clone has
    none of its own, and the tests that read upstream code would skip."""
    common = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--path-format=absolute", "--git-common-dir"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    stores = Path(common) / "atlas-upstreams" if common else None
    return stores if stores and stores.is_dir() else None


def timed(book: Path, cmd: list[str], cores: str, report: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user and system, of every process it started) and status.
    On a machine shared with other work the wall time grows with the load; the CPU time much
    less, so both are reported."""
    env = {
        **os.environ,
        "PYTHONPATH": str(book / "ext"),
        "PYTEST_ADDOPTS": f"--junitxml={report}",
    }
    stores = upstream_stores()
    if stores:
        env["ATLAS_UPSTREAMS_ROOT"] = str(stores)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(["taskset", "-c", cores, *cmd], cwd=book, env=env, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    (report.with_suffix(".log")).write_bytes(proc.stdout + proc.stderr)
    return wall, cpu, proc.returncode


def measure(rev: str, into: Path, cores: str, ci: bool, slowest: int) -> dict[str, object]:
    book = clone(rev, into)
    report = LOGS / f"{book.name}-test.xml"
    seconds, cpu, rc = timed(book, ["make", *KEEP, "test"], cores, report)
    result: dict[str, object] = {
        "rev": rev,
        "make_test_s": round(seconds, 1),
        "make_test_cpu_s": round(cpu, 1),
        "rc": rc,
        "log": str(report.with_suffix(".log")),
        **junit_summary(report, slowest),
    }
    if ci:
        ci_report = LOGS / f"{book.name}-ci.xml"
        ci_seconds, _, ci_rc = timed(book, [".ci/run"], cores, ci_report)
        result |= {"ci_s": round(ci_seconds, 1), "ci_rc": ci_rc}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="the commit measured")
    parser.add_argument("--baseline", help="a commit to measure first, for the ratio")
    parser.add_argument("--cores", default="0,1", help="taskset's CPU list (default: 0,1)")
    parser.add_argument("--ci", action="store_true", help="time .ci/run too (several minutes)")
    parser.add_argument("--slowest", type=int, default=10)
    args = parser.parse_args()
    revs = [r for r in (args.baseline, args.rev) if r]
    LOGS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="atlas-test-suite-") as tmp:
        results = [measure(r, Path(tmp), args.cores, args.ci, args.slowest) for r in revs]
        for r in results:
            counts = f"{r['passed']} passed, {r['failed']} failed, {r['skipped']} skipped"
            took = f"make test {r['make_test_s']} s ({r['make_test_cpu_s']} s CPU)"
            print(f"{r['rev']}: {took} (rc {r['rc']}), {counts}")
            for name, seconds in r["slowest"]:
                print(f"    {seconds:7.1f} s  {name}")
            if "ci_s" in r:
                print(f"    .ci/run {r['ci_s']} s (rc {r['ci_rc']})")
    summary: dict[str, object] = {"cores": args.cores, "results": results}
    last = results[-1]
    summary["make_test_within_target"] = last["make_test_s"] <= TARGET_TEST_S
    if "ci_s" in last:
        summary["ci_within_target"] = last["ci_s"] <= TARGET_CI_S
    if len(results) == 2:
        summary["ratio_make_test"] = round(last["make_test_s"] / results[0]["make_test_s"], 3)
        summary["ratio_make_test_cpu"] = round(
            last["make_test_cpu_s"] / results[0]["make_test_cpu_s"], 3
        )
    print(json.dumps(summary))
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
