"""``python -m atlas.upstream drift NAME [REV]`` and ``bump NAME REV``: arguments and output.

A package upstream (a pin in ``pyproject.toml``) is handed to
:mod:`atlas.upstream.package_drift`; a git upstream is planned with :mod:`.plan` and, for
``bump``, applied with :mod:`.bump`. The plan is printed as a table (or JSON records) on
stdout; errors are one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from atlas import bookroot
from atlas.bookroot import NotABook, find_root
from atlas.upstream import partialclone
from atlas.upstream.drift.bump import apply
from atlas.upstream.drift.model import SHORT, STATUSES, DriftError, DriftStatus, Plan
from atlas.upstream.drift.plan import plan


def table(the_plan: Plan) -> str:
    """The plan for people: one row per citation, then the diffs of what needs a human."""
    up = the_plan.upstream
    rows = [f"{up.name}: {the_plan.old[:SHORT]} -> {the_plan.new[:SHORT]}"]
    width = max((len(f"{r.page}:{r.line}") for r in the_plan.records), default=10)
    for r in the_plan.records:
        arrow = r.new if r.new != r.old else "(as is)"
        if r.status is DriftStatus.MOVED and r.new == r.old and r.detail:
            arrow += f" ({r.detail})"
        rows.append(f"  {r.status:<9} {f'{r.page}:{r.line}':<{width}}  {r.old}  ->  {arrow}")
    counts = the_plan.counts()
    rows.append(
        "summary: "
        + ", ".join(f"{counts[s]} {s}" for s in STATUSES)
        + (
            f"; {len(the_plan.kept)} citation(s) with an explicit @REV left alone"
            if the_plan.kept
            else ""
        )
    )
    for r in the_plan.records:
        if not r.carried and r.detail:
            rows += ["", f"{r.status}: {r.page}:{r.line}  {r.old}", r.detail]
    return "\n".join(rows)


def print_plan(the_plan: Plan, as_json: bool) -> None:
    """The plan on stdout: one JSON record per citation, or the table (git and package
    upstreams alike)."""
    if as_json:
        print(json.dumps([r.to_json() for r in the_plan.records], indent=1, ensure_ascii=False))
    else:
        print(table(the_plan))


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
    parser.add_argument("--json", action="store_true", help="one JSON record per citation")
    parser.add_argument("--root", type=Path, default=None, help="the book's root (default: here)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from atlas.upstream import package_drift  # it imports this package's model and carry

    if package_drift.is_package(argv):  # a package upstream: compare wheels, move pyproject's pin
        return package_drift.main(argv)
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
            result = apply(root, the_plan)
    except (DriftError, partialclone.FetchError) as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    print_plan(the_plan, args.json)
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
