"""``python -m atlas.upstream drift NAME [REV]`` and ``bump NAME REV``: arguments and output.

A package upstream (a pin in ``pyproject.toml``) is handed to :mod:`.package_cli`; a git
upstream is planned with :mod:`.plan` and, for ``bump``, applied with :mod:`.bump` and the
gitlink of :mod:`.gitlink`. The plan is printed by :mod:`.report` as a table (or JSON records)
on stdout; errors are one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from atlas import bookroot
from atlas.bookroot import NotABook, find_root
from atlas.upstream import partialclone
from atlas.upstream.drift import package_cli
from atlas.upstream.drift.bump import apply
from atlas.upstream.drift.gitlink import GitlinkPin
from atlas.upstream.drift.labs import fetch_lab_files, labs_reading, run_labs
from atlas.upstream.drift.model import SHORT, DriftError, Plan
from atlas.upstream.drift.plan import plan
from atlas.upstream.drift.queue import write_queue
from atlas.upstream.drift.report import print_plan
from atlas.upstream.registry import Upstream, load_registry


def parse_args(command: str, argv: list[str]) -> argparse.Namespace:
    """The arguments of ``drift`` (REV optional) or ``bump`` (REV required, ``--dry-run``)."""
    parser = argparse.ArgumentParser(
        prog=f"python -m atlas.upstream {command}",
        description=(
            "Report which citations of NAME would be unchanged, moved, changed or gone at REV."
            if command == "drift"
            else "Move NAME's pin to REV and carry every citation of NAME across."
        ),
    )
    parser.add_argument("name", metavar="NAME")
    parser.add_argument(
        "rev",
        metavar="REV",
        nargs="?" if command == "drift" else None,
        help="commit SHA, tag or branch (drift default: the remote's HEAD)",
    )
    if command == "bump":
        parser.add_argument("--dry-run", action="store_true", help="print the plan only")
    else:
        parser.add_argument(
            "--labs", action="store_true", help="run the labs that read NAME against REV"
        )
    parser.add_argument("--json", action="store_true", help="one JSON record per citation")
    parser.add_argument("--root", type=Path, default=None, help="the book's root (default: here)")
    return parser.parse_args(argv)


def report_labs(root: Path, the_plan: Plan, run: bool) -> int:
    """List the lab pages that read the upstream (stderr); with ``run``, run them at the new
    commit and print each lab's outcome. 1 when a lab does not pass there."""
    up = the_plan.upstream
    pages = labs_reading(root, up.name, set(load_registry(root)))
    count = sum(len(s) for s in pages.values())
    print(f"{count} lab(s) on {len(pages)} page(s) read {up.name}:", file=sys.stderr)
    for page, specs in sorted(pages.items()):
        print(f"  {page}: {len(specs)} lab(s)", file=sys.stderr)
    if not run or not pages:
        if pages and not run:
            print("  run them at the new commit with --labs", file=sys.stderr)
        return 0
    assert the_plan.git_dir is not None and isinstance(up, Upstream)
    _, ours = partialclone.ensure_store(root, up)
    fetch_lab_files(root, the_plan.git_dir, the_plan.new, ours)
    log = root / bookroot.BUILD / "upstream-review" / f"{up.name}-labs.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    outcomes = run_labs(pages, up.name, the_plan.new, log)
    bad = [o for o in outcomes if not o.ok]
    for o in outcomes:
        print(f"  {o.status:<8} {o.page}: {o.title}", file=sys.stderr)
        if not o.ok and o.message:
            print("    " + o.message.strip().replace("\n", "\n    ")[:2000], file=sys.stderr)
    print(
        f"labs at {the_plan.new[:SHORT]}: {len(outcomes) - len(bad)} passed, {len(bad)} not; "
        "a lab that runs upstream code is fixed in its loader in ext/atlas/labkit",
        file=sys.stderr,
    )
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if package_cli.is_package(argv):  # a package upstream: compare wheels, move pyproject's pin
        return package_cli.main(argv)
    command = argv.pop(0) if argv and argv[0] in ("drift", "bump") else "drift"
    args = parse_args(command, argv)
    try:
        root = find_root(args.root)
    except NotABook as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    try:
        the_plan = plan(root, args.name, args.rev)
        result = None
        if command == "bump" and not args.dry_run:
            with GitlinkPin(root, the_plan) as pin:
                result = apply(root, the_plan, pin)
    except (DriftError, partialclone.FetchError) as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    print_plan(the_plan, args.json)
    if command == "drift" and isinstance(the_plan.upstream, Upstream):
        status = report_labs(root, the_plan, run=args.labs)
        if status:
            return status
    queue = write_queue(root, the_plan, applied=result is not None)
    left = sum(not r.carried for r in the_plan.records)
    if left:
        print(
            f"{left} citation(s) to review, {sum(bool(r.suggestion) for r in the_plan.records)} "
            f"with a suggestion: {queue}; "
            + (
                f"walk them with `{bookroot.command(root, 'review', args.name)}`"
                if result is not None
                else "bump first, then walk them with review"
            ),
            file=sys.stderr,
        )
    if result is not None:
        print(
            f"bumped {args.name} to {the_plan.new[:SHORT]}: {len(result['pages'])} page(s) "
            f"rewritten, {result['lock_moved']} lock entries moved"
            + (
                f", {result['lock_unknown']} citation(s) not in the lock "
                f"(run `{bookroot.command(root, 'lock')}`)"
                if result["lock_unknown"]
                else ""
            )
            + f"; the gitlink {the_plan.upstream.path} is staged",
            file=sys.stderr,
        )
    return 0
