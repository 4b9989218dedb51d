"""A no-op ``make html`` on the real book, against a no-op ``sphinx-build`` of the same tree.

The book is cloned from the last commit into a temporary folder (so that pages being edited
meanwhile do not count), with this checkout's .venv, node_modules and upstream objects. After
two warm-up builds (the first runs every lab once), each command runs again on the unchanged
tree: ``make html`` (the upstream check ``fetch --if-needed``, then Sphinx) and, as the
baseline, ``python -m sphinx -M html`` alone on the same build folder, with the same stable
configuration. Sphinx's own counts say what each no-op did: documents read
("updating environment: A added, C changed") and pages written ("writing output... [ n%]").
Then ``make check`` right after ``make html`` must read nothing either.

Target: no-op ``make html`` / no-op ``sphinx-build`` <= 1.1; 0 documents read, 0 pages written
by every no-op, ``make check`` included.

Run: ``.venv/bin/python benchmarks/noop_build.py [--runs N]``. The last line printed is one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD = "_build/bench"
# make's own prerequisites are this checkout's (symlinked): never rebuilt by the benchmark
KEEP = ["-o", ".venv/.installed", "-o", "node_modules/.installed"]


def clone(into: Path) -> Path:
    book = into / "book"
    subprocess.run(
        ["git", "clone", "-q", "--shared", str(REPO), str(book)], check=True, capture_output=True
    )
    for name in (".venv", "node_modules"):
        (book / name).symlink_to(REPO / name)
    return book


def run(book: Path, cmd: list[str], env: dict[str, str]) -> tuple[float, str, int]:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=book, env=env, capture_output=True, text=True)
    return time.perf_counter() - started, proc.stdout + proc.stderr, proc.returncode


def counts(log: str) -> dict[str, int | bool]:
    """Sphinx's own counts in a build log: documents read, pages written."""
    env = re.search(r"updating environment: (?:\[[^\]]*\] )?(\d+) added, (\d+) changed", log)
    read = int(env.group(1)) + int(env.group(2)) if env else -1
    written = len(re.findall(r"^writing output\.\.\. \[\s*\d+%\]", log, re.M))
    return {
        "read": read,
        "written": written,
        "read_docs": re.findall(r"^reading sources\.\.\. \[\s*\d+%\] (\S+)", log, re.M),
        "config_changed": "The configuration has changed" in log,
    }


def reread_always(book: Path) -> list[str]:
    """Pages Sphinx itself re-reads on every build (a toctree naming a page that does not
    exist yet), from the pickled environment."""
    import pickle

    sys.path.insert(0, str(book / "ext"))
    try:
        with open(book / BUILD / "doctrees" / "environment.pickle", "rb") as fh:
            env = pickle.load(fh)
        return sorted(env.reread_always)
    except Exception:  # noqa: BLE001 - a report, not a check
        return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each command")
    args = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = "ext"  # the clone's own extensions, for make's commands as for Sphinx
    stores = REPO / ".git" / "atlas-upstreams"
    if stores.is_dir():
        env["ATLAS_UPSTREAMS_ROOT"] = str(stores)
    make_html = ["make", *KEEP, "html", f"BUILDDIR={BUILD}"]
    make_check = ["make", *KEEP, "check", f"BUILDDIR={BUILD}"]
    sphinx = [".venv/bin/python", "-m", "sphinx", "-M", "html", "source", BUILD, "-c", "."]
    with tempfile.TemporaryDirectory(prefix="atlas-noop-") as tmp:
        book = clone(Path(tmp))
        for _ in range(2):  # the first reads everything and runs the labs; the second settles
            _, log, _ = run(book, make_html, env)
        make_times, sphinx_times = [], []
        make_counts = sphinx_counts = {}
        for _ in range(args.runs):  # interleaved, so that load on the machine hits both alike
            seconds, log, status = run(book, make_html, env)
            make_times.append(seconds)
            make_counts = {**counts(log), "exit": status}
            seconds, log, status = run(book, sphinx, env)
            sphinx_times.append(seconds)
            sphinx_counts = {**counts(log), "exit": status}
        run(book, make_html, env)
        _, log, status = run(book, make_check, env)
        check_counts = {**counts(log), "exit": status}
        always = reread_always(book)
    result = {
        "make_html_noop_s": round(statistics.median(make_times), 3),
        "sphinx_build_noop_s": round(statistics.median(sphinx_times), 3),
        "ratio": round(statistics.median(make_times) / statistics.median(sphinx_times), 3),
        "target_ratio": 1.1,
        "make_html_noop": make_counts,
        "sphinx_build_noop": sphinx_counts,
        "make_check_after_html": check_counts,
        "sphinx_rereads_always": always,
        "commit": subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
    }
    print(
        f"no-op make html {result['make_html_noop_s']} s, no-op sphinx-build "
        f"{result['sphinx_build_noop_s']} s: ratio {result['ratio']} (target <= 1.1)"
    )
    for name in ("make_html_noop", "sphinx_build_noop", "make_check_after_html"):
        c = result[name]
        changed = ", configuration changed" if c["config_changed"] else ""
        docs = f": {', '.join(c['read_docs'])}" if c["read_docs"] else ""
        print(f"  {name}: {c['read']} documents read, {c['written']} pages written{changed}"
              f" (exit {c['exit']}){docs}")  # fmt: skip
    if always:
        print(
            f"  Sphinx re-reads on every build the pages whose toctree names a page that does not "
            f"exist yet: {', '.join(always)} (and the pages listing all labs and problems follow)"
        )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
