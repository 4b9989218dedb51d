"""Mutation checks for labs: plant a realistic bug in labkit, run the labs, see who notices.

A lab that only prints what its own code computed passes whatever that code does; a lab that
compares with something independent fails when the code is wrong. This tool measures which.
Each entry of ``mutants.MUTATIONS`` (``benchmarks/mutants/<chapter>.py``) is a named, minimal
patch: one exact text replaced in one labkit file. For each, the tool copies ``ext/`` to a
temporary book root (every other entry of the repository is linked, so upstream objects and the
registry are found as usual), applies the patch there, and runs the labs of **every page that
reaches the mutated file** (its labs' labkit imports and what those import, transitively: the
lab cache's own dependency reading, :func:`atlas.labs.imports.closure`), the entry's own pages
first. Each mutant is then one of:

- **check**: an example that asserts (:mod:`atlas.labs.kinds`: it shows a comparison's
  ``True``, or raises ``AssertionError``) failed. Only this counts as caught;
- **crash**: only examples that raised, labs that crashed or pages that timed out noticed;
- **snapshot**: only examples that print a value noticed (a printed number changed);
- **missed**: every lab passed.

The table names the first failing example of each catch (page, line, lab). Once a check has
caught a mutant, its remaining pages are not run (the verdict cannot change).

Usage (from the repository root)::

    .venv/bin/python benchmarks/mutations.py                  # every mutation
    .venv/bin/python benchmarks/mutations.py --chapter serving
    .venv/bin/python benchmarks/mutations.py --only ring-no-scale zero2-keeps-grads
    .venv/bin/python benchmarks/mutations.py --list
    .venv/bin/python benchmarks/mutations.py --json report.json  # the report, for a review

Exit status 0 when every mutant was caught by a check, 1 otherwise, 2 when the unmutated labs
of a page to run do not all pass (each page runs unmutated once, the first time a mutant needs
it; a page that fails so is left out, and named). ``--max-pages N`` stops each mutant after N
pages, a shortcut for a quick look: the report shows pages run against pages reached. A lab
that skips itself (upstream objects absent) catches nothing: run ``make upstreams`` first. A
lab that ``:needs: cuda`` is left out on a machine without a GPU, as a build leaves it
unreported.

How it runs: this process imports torch once; each page's labs run in a child forked from it,
which drops every ``atlas`` module it inherited, puts the temporary copy first on ``sys.path``
and runs the page's labs in order with the book's own lab worker (``atlas.labs.worker.run_lab``,
seeded as in the build). A page is stopped after ``--timeout`` seconds; its remaining labs count
as timed out (a crash, above).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import select
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "source"
LABKIT = ROOT / "ext" / "atlas" / "labkit"
FENCE = re.compile(r"^(`{3,})\{lab\}\s*(.*)$")
sys.path.insert(0, str(ROOT / "ext"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from atlas.labs.directive import parse_examples  # noqa: E402 - torch-free, before the forks
from atlas.labs.imports import closure, data_files, lab_modules  # noqa: E402
from atlas.labs.kinds import asserts  # noqa: E402
from atlas.labs.model import ExampleOutcome, ExampleSpec, LabResult, LabStatus  # noqa: E402
from mutants import MUTATIONS, Mutation  # noqa: E402

OUTCOMES = ("check", "crash", "snapshot", "missed")  # best first; only "check" counts


@dataclass
class Lab:
    """One lab of a page: what the worker runs, and its examples for the classification."""

    page: str
    title: str
    job: dict
    examples: tuple[ExampleSpec, ...]


@dataclass
class Catch:
    """Who noticed a mutant: how (an OUTCOMES word), where, and what the example said."""

    how: str
    page: str
    lab: str
    line: int | None
    detail: str = ""

    def where(self) -> str:
        at, detail = f":{self.line}" if self.line else "", f": {self.detail}" if self.detail else ""
        return f"{self.page}{at} ({self.lab}){detail}"


@dataclass
class Verdict:  # what a mutant's run found; its outcome is the best way it was noticed
    mutation: Mutation
    catches: list[Catch] = field(default_factory=list)
    pages_run: int = 0  # pages that ran against the mutant, of the pages that reach its file
    pages_reached: int = 0

    @property
    def outcome(self) -> str:
        found = {catch.how for catch in self.catches}
        return next((how for how in OUTCOMES[:3] if how in found), "missed")


def page_labs(docname: str) -> list[Lab]:
    """The labs of ``source/<docname>.md`` as the worker wants them (text, options, title)."""
    lines = (SOURCE / f"{docname}.md").read_text(encoding="utf-8").splitlines()
    labs: list[Lab] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, title = match.group(1), match.group(2).strip()
        i += 1
        options: dict[str, str] = {}
        while i < len(lines) and lines[i].startswith(":"):
            key, _, value = lines[i][1:].partition(":")
            options[key.strip()] = value.strip()
            i += 1
        first = i + 1
        body = []
        while i < len(lines) and lines[i].rstrip() != fence:
            body.append(lines[i])
            i += 1
        text = "\n".join(body) + "\n"
        job = {
            "title": title,
            "text": text,
            "needs": options.get("needs", ""),
            "expect_failure": "expect-failure" in options,
            "timeout": float(options.get("timeout", 60)),
            "seed": 0,
            "memory_limit_mb": 0,
            "filename": f"{docname} (lab {len(labs) + 1})",
        }
        labs.append(Lab(docname, title, job, parse_examples(text, first)))
        i += 1
    return labs


def reached_files(labs: list[Lab]) -> set[Path]:
    """Every labkit file the labs of a page import, directly or through other labkit files."""
    modules = lab_modules([example.source for lab in labs for example in lab.examples], LABKIT)
    files = closure(modules, LABKIT)
    return set(files) | set(data_files(files))  # and the .cu kernels those modules compile


def classify(lab: Lab, result: LabResult) -> list[Catch]:
    """How a lab that is not fine noticed: a failing asserting example is a check."""
    if result.status in (LabStatus.PASSED, LabStatus.XFAIL, LabStatus.SKIPPED):
        return []
    catches: list[Catch] = []
    earlier: list[str] = []
    for example, got in zip(lab.examples, result.examples, strict=False):
        if got.outcome == ExampleOutcome.FAILED:
            how = "check" if asserts(example, earlier) else "snapshot"
            catches.append(Catch(how, lab.page, lab.title, example.line, _line(got.got, 0)))
        elif got.outcome == ExampleOutcome.ERROR:
            how = "check" if "AssertionError" in got.got else "crash"
            catches.append(Catch(how, lab.page, lab.title, example.line, _line(got.got, -1)))
        earlier.append(example.source)
    if not catches:  # crashed, timed out or out of memory before any example finished
        detail = result.message or str(result.status)
        catches.append(Catch("crash", lab.page, lab.title, None, detail))
    return catches


def _line(text: str, index: int) -> str:  # first of a value, last of a traceback

    return (text.strip().splitlines() or [""])[index][:80]


def _child(ext: Path, jobs: list[dict], write_fd: int) -> None:
    """Body of the forked child: import atlas from ``ext`` and run the labs in order."""
    for name in [n for n in sys.modules if n == "atlas" or n.startswith("atlas.")]:
        del sys.modules[name]
    sys.path.insert(0, str(ext))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ext), os.environ.get("PYTHONPATH", "")])
    import types

    from atlas.labs.worker import run_lab  # the copy's worker, seeded as in the build

    devnull = os.open(os.devnull, os.O_WRONLY)
    module = types.ModuleType("__lab__")
    sys.modules["__lab__"] = module
    for index, job in enumerate(jobs):
        try:
            result = run_lab(index, job, module.__dict__, devnull).to_json()
        except BaseException as exc:  # noqa: BLE001 - report, never hang the parent
            result = {"crashed": f"{type(exc).__name__}: {exc}"}
        os.write(write_fd, pickle.dumps((index, result)) + b"\n--\n")
    os._exit(0)


def run_page(ext: Path, labs: list[Lab], timeout: float, stop_at_check: bool) -> list[Catch]:
    """What noticed, among ``labs`` run against the labkit under ``ext`` (a fork of this
    process); with ``stop_at_check`` the page stops at the first lab a check failed in."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_fd)
        try:
            _child(ext, [lab.job for lab in labs], write_fd)
        finally:
            os._exit(1)
    os.close(write_fd)
    catches: list[Catch] = []
    done: set[int] = set()
    buffer = b""
    deadline = time.monotonic() + timeout
    stopped = False
    while not stopped:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            for index in sorted(set(range(len(labs))) - done)[:1]:  # the one that was running
                catches.append(Catch("crash", labs[index].page, labs[index].title, None, "timeout"))
            break
        ready, _, _ = select.select([read_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_fd, 1 << 20)
        if not chunk:
            break
        buffer += chunk
        while b"\n--\n" in buffer:
            record, buffer = buffer.split(b"\n--\n", 1)
            index, data = pickle.loads(record)
            done.add(index)
            lab = labs[index]
            if "crashed" in data:
                catches.append(Catch("crash", lab.page, lab.title, None, data["crashed"]))
                continue
            found = classify(lab, LabResult.from_json(data))
            catches += found
            if stop_at_check and any(catch.how == "check" for catch in found):
                os.kill(pid, signal.SIGKILL)
                stopped = True
                break
    if not stopped and len(done) < len(labs) and not catches:
        catches.append(Catch("crash", labs[0].page, "the page's worker", None, "exited early"))
    os.close(read_fd)
    os.waitpid(pid, 0)
    return catches


def copy_tree(mutation: Mutation | None, where: Path) -> Path:
    """A book root under ``where`` whose ``ext/`` is a copy (patched by ``mutation``) and whose
    other entries link to the repository. Returns the copy's ``ext`` folder."""
    where.mkdir(parents=True, exist_ok=True)
    for entry in ROOT.iterdir():
        if entry.name in ("ext", "_build"):
            continue
        (where / entry.name).symlink_to(entry)
    ext = where / "ext"
    shutil.copytree(ROOT / "ext", ext, ignore=shutil.ignore_patterns("__pycache__"))
    if mutation is not None:
        target = ext / "atlas" / "labkit" / mutation.path
        text = target.read_text(encoding="utf-8")
        count = text.count(mutation.old)
        if count != 1:
            raise SystemExit(
                f"mutation {mutation.name}: the text to replace occurs {count} times in "
                f"ext/atlas/labkit/{mutation.path} (it must occur once); update the mutation"
            )
        target.write_text(text.replace(mutation.old, mutation.new), encoding="utf-8")
    return ext


def book_pages() -> dict[str, list[Lab]]:
    """Every page of the book that has labs, by docname."""
    pages = {}
    for path in sorted(SOURCE.rglob("*.md")):
        docname = path.relative_to(SOURCE).with_suffix("").as_posix()
        labs = page_labs(docname)
        if labs:
            pages[docname] = labs
    return pages


def pages_to_run(mutation: Mutation, reach: dict[str, set[Path]]) -> list[str]:
    """The entry's own pages, then every other page whose labs reach the mutated file."""
    target = (LABKIT / mutation.path).resolve()
    reached = [page for page, files in reach.items() if target in files]
    missing = [page for page in mutation.pages if page not in reach]
    if missing:
        raise SystemExit(f"mutation {mutation.name}: no page {', '.join(missing)} with labs")
    return [*mutation.pages, *(page for page in reached if page not in mutation.pages)]


def report(verdicts: list[Verdict], elapsed: float) -> str:
    width = max(len(v.mutation.name) for v in verdicts)
    lines = [f"{'mutation':{width}s}  outcome   first failing example (pages run/reached)"]
    lines.append(f"{'-' * width}  --------  {'-' * 60}")
    for verdict in verdicts:
        best = [c for c in verdict.catches if c.how == verdict.outcome][:1]
        where = best[0].where() if best else "NOT CAUGHT"
        runs = f" [{verdict.pages_run}/{verdict.pages_reached}]"
        lines.append(f"{verdict.mutation.name:{width}s}  {verdict.outcome:8s}  {where}{runs}")
    counts = {how: sum(v.outcome == how for v in verdicts) for how in OUTCOMES}
    lines.append(
        f"\n{len(verdicts)} mutants in {elapsed:.0f} s: {counts['check']} caught by a check, "
        f"{counts['crash']} only by a crash, {counts['snapshot']} only by a snapshot, "
        f"{counts['missed']} missed"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="run these mutations only")
    parser.add_argument("--chapter", help="run the mutations of this chapter only")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds per page")
    parser.add_argument("--json", type=Path, help="also write the report as JSON here")
    parser.add_argument(
        "--max-pages", type=int, default=0, help="run at most this many pages per mutant (0: all)"
    )
    args = parser.parse_args(argv)

    chosen = [m for m in MUTATIONS if (not args.only or m.name in args.only)]
    chosen = [m for m in chosen if not args.chapter or m.chapter == args.chapter]
    if args.list:
        for m in chosen:
            print(f"{m.name:34s} {m.path:30s} {', '.join(m.pages)}\n{'':34s} {m.bug}")
        return 0
    if not chosen:
        print("no mutation selected", file=sys.stderr)
        return 2
    import numpy  # noqa: F401 - what every lab imports, once, before the forks
    import torch
    import torch.distributed  # noqa: F401

    torch.set_num_threads(1)
    started, cuda = time.monotonic(), torch.cuda.is_available()
    # A lab that ``:needs: cuda`` on a machine without it is never started, and a build does not
    # report it (atlas.labs.execute); it can neither pass the baseline nor catch anything here.
    labs = {
        page: [lab for lab in found if cuda or lab.job["needs"] != "cuda"]
        for page, found in book_pages().items()
    }
    reach = {page: reached_files(found) for page, found in labs.items() if found}
    plans = {m.name: pages_to_run(m, reach) for m in chosen}

    with tempfile.TemporaryDirectory(prefix="atlas-mutations-") as tmp:
        base_ext = copy_tree(None, Path(tmp) / "baseline")
        baseline: dict[str, list[Catch]] = {}  # run once per page, when a mutant first needs it
        verdicts = []
        for n, mutation in enumerate(chosen):
            ext = copy_tree(mutation, Path(tmp) / f"m{n}")
            plan = plans[mutation.name]
            verdict = Verdict(mutation, pages_reached=len(plan))
            for page in plan[: args.max_pages or None]:
                if page not in baseline:
                    baseline[page] = run_page(base_ext, labs[page], args.timeout, False)
                if baseline[page]:
                    continue  # reported below; a page that fails unmutated proves nothing
                verdict.pages_run += 1
                verdict.catches += run_page(ext, labs[page], args.timeout, stop_at_check=True)
                if verdict.outcome == "check":
                    break
            verdicts.append(verdict)
            print(f"{mutation.name}: {verdict.outcome} [{verdict.pages_run}/{len(plan)}]",
                  file=sys.stderr, flush=True)  # fmt: skip
            shutil.rmtree(ext.parent)
    broken = {page: catches for page, catches in baseline.items() if catches}
    for catches in broken.values():
        print(f"baseline: {'; '.join(c.where() for c in catches)}", file=sys.stderr)
    if broken:
        print("the unmutated labs of these pages do not all pass, so they were left out; fix "
              "them first (or make upstreams)", file=sys.stderr)  # fmt: skip

    print(report(verdicts, time.monotonic() - started))
    if args.json:
        fields = ("outcome", "pages_run", "pages_reached")
        rows = [
            {"name": v.mutation.name, "chapter": v.mutation.chapter}
            | {name: getattr(v, name) for name in fields}
            | {"catches": [c.__dict__ for c in v.catches]}
            for v in verdicts
        ]
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    if broken:
        return 2
    return 0 if all(v.outcome == "check" for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
