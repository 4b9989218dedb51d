"""The labs that read an upstream's code: listed by ``drift NAME REV``, run at REV with ``--labs``.

``python -m atlas.upstream drift`` starts ``python -m atlas.labs.drift`` for this (a process, not
an import), so that atlas.upstream never imports atlas.labs, which imports it for the lab cache's
keys: the two packages stay out of a cycle (tests/test_package_imports.py).

Labs that execute an upstream's own code (Megatron's router, slime's packing) break on a pin
move the way citations do, and a broken loader used to be found only by a full ``make check``.
Here the book's lab blocks are read from the pages without Sphinx (the ``lab`` fences and their
options, parsed by the directive's own :func:`atlas.labs.directive.parse_examples`); a page
whose labs read NAME is one where :func:`atlas.labs.cache.upstreams_read` finds it, the rule
that keys the lab cache. ``--labs`` runs those pages through the book's lab runner with the
upstream read at REV (:data:`PINS_VARIABLE`, honoured by ``atlas.labkit.pinned.pinned``),
after fetching the files the labkit names (:mod:`atlas.upstream.labpaths`) at REV.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from atlas import bookroot
from atlas.git.store import GitStore, MissingObject, UnsafePath
from atlas.labs.cache import upstreams_read
from atlas.labs.directive import parse_examples
from atlas.labs.imports import LABKIT
from atlas.labs.model import LabResult, LabSpec
from atlas.upstream import partialclone
from atlas.upstream.labpaths import lab_path_candidates
from atlas.upstream.registry import Upstream, load_registry

PINS_VARIABLE = "ATLAS_UPSTREAM_PINS"  # "name=FULLSHA,...": labs read these instead of the pins
FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{lab\}\s*(?P<title>.*?)\s*$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True)
class LabOutcome:
    page: str
    title: str
    status: str
    message: str
    ok: bool


def page_labs(page: str, text: str) -> list[LabSpec]:
    """The lab blocks of one MyST page, as the directive would record them."""
    lines = text.splitlines()
    specs: list[LabSpec] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, fence = i + 1, match["fence"]
        options: dict[str, str] = {}
        j = i + 1
        while j < len(lines) and (opt := OPTION.match(lines[j])):
            options[opt["key"]] = opt["value"]
            j += 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        body_start = j
        while j < len(lines) and lines[j].strip() != fence:
            j += 1
        body = "\n".join(lines[body_start:j]) + "\n"
        try:
            examples = parse_examples(body, body_start + 1)
            timeout = float(options.get("timeout", DEFAULT_TIMEOUT))
        except ValueError:
            examples, timeout = (), DEFAULT_TIMEOUT  # the build reports it at its line
        if examples:
            specs.append(
                LabSpec(
                    page, len(specs), f"lab-{len(specs) + 1}", match["title"], body,
                    body_start + 1, start, examples, timeout, options.get("needs", ""),
                    "expect-failure" in options,
                )
            )  # fmt: skip
        i = j + 1
    return specs


def labs_reading(book_root: Path, name: str, known: set[str]) -> dict[str, list[LabSpec]]:
    """Page -> its labs, for every page whose labs read upstream ``name``."""
    found = {}
    for path in sorted((Path(book_root) / "source").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if "{lab}" not in text:
            continue
        specs = page_labs(str(path.relative_to(book_root)), text)
        if specs and name in upstreams_read(specs, known, LABKIT):
            found[str(path.relative_to(book_root))] = specs
    return found


def fetch_lab_files(book_root: Path, git_dir: Path, commit: str, ours: bool) -> int:
    """Fetch the blobs, at ``commit``, of the files the labkit names; how many were fetched."""
    store = GitStore(git_dir)
    try:
        wanted = set()
        for path in sorted(lab_path_candidates(book_root)):
            try:
                entry = store.tree_entry(commit, path)
            except (UnsafePath, LookupError, MissingObject):
                continue
            if entry and entry[1] == "blob" and not store.has_object(entry[2]):
                wanted.add(entry[2])
    finally:
        store.close()
    if wanted and ours:
        partialclone.fetch_blobs(git_dir, sorted(wanted), None, quick=False)
    return len(wanted) if ours else 0


def why(lab: LabResult) -> str:
    """What a lab that did not pass said: its message, or what its failing example printed."""
    if lab.message:
        return lab.message
    if lab.failed_example is not None and lab.failed_example < len(lab.examples):
        return lab.examples[lab.failed_example].got
    return ""


def run_labs(
    pages: dict[str, list[LabSpec]], name: str, commit: str, log: Path
) -> list[LabOutcome]:
    """Run the pages' labs with upstream ``name`` read at ``commit``."""
    from atlas.labs.runner import Job, LabRunner

    saved = os.environ.get(PINS_VARIABLE)
    os.environ[PINS_VARIABLE] = f"{name}={commit}"
    try:
        jobs = [Job(page, f"drift-{page}", specs) for page, specs in sorted(pages.items())]
        outcomes = []
        with LabRunner(log, jobs=1) as runner:
            for job, result in runner.run(jobs):
                for spec, lab in zip(job.specs, result.labs, strict=False):
                    outcomes.append(
                        LabOutcome(job.docname, spec.title, str(lab.status), why(lab), lab.ok)
                    )
        return outcomes
    finally:
        if saved is None:
            os.environ.pop(PINS_VARIABLE, None)
        else:
            os.environ[PINS_VARIABLE] = saved


def report_labs(root: Path, name: str, git_dir: Path | None, commit: str, run: bool) -> int:
    """List the lab pages that read upstream ``name`` (stderr); with ``run``, run them at
    ``commit`` and print each lab's outcome. 1 when a lab does not pass there."""
    pages = labs_reading(root, name, set(load_registry(root)))
    count = sum(len(s) for s in pages.values())
    print(f"{count} lab(s) on {len(pages)} page(s) read {name}:", file=sys.stderr)
    for page, specs in sorted(pages.items()):
        print(f"  {page}: {len(specs)} lab(s)", file=sys.stderr)
    if not run or not pages:
        if pages and not run:
            print("  run them at the new commit with --labs", file=sys.stderr)
        return 0
    up = load_registry(root).get(name)
    assert git_dir is not None and isinstance(up, Upstream)
    _, ours = partialclone.ensure_store(root, up)
    fetch_lab_files(root, git_dir, commit, ours)
    log = root / bookroot.BUILD / "upstream-review" / f"{name}-labs.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    outcomes = run_labs(pages, name, commit, log)
    bad = [o for o in outcomes if not o.ok]
    for o in outcomes:
        print(f"  {o.status:<8} {o.page}: {o.title}", file=sys.stderr)
        if not o.ok and o.message:
            print("    " + o.message.strip().replace("\n", "\n    ")[:2000], file=sys.stderr)
    print(
        f"labs at {commit[:12]}: {len(outcomes) - len(bad)} passed, {len(bad)} not; "
        "a lab that runs upstream code is fixed in its loader in ext/atlas/labkit",
        file=sys.stderr,
    )
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m atlas.labs.drift --root R --name N --commit C [--git-dir G] [--run]``."""
    parser = argparse.ArgumentParser(prog="python -m atlas.labs.drift")
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--git-dir", type=Path, default=None)
    parser.add_argument("--run", action="store_true")
    args = parser.parse_args(argv)
    return report_labs(args.root, args.name, args.git_dir, args.commit, args.run)


if __name__ == "__main__":
    sys.exit(main())
