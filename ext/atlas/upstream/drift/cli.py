"""``python -m atlas.upstream drift NAME [REV]`` and ``bump NAME REV``: arguments and output.

A package upstream (a pin in ``pyproject.toml``) is handed to :mod:`.package_cli`; a git
upstream is planned with :mod:`.plan` and, for ``bump``, applied with :mod:`.bump` and the
gitlink of :mod:`.gitlink`. The plan is printed by :mod:`.report` as a table (or JSON records)
on stdout; errors are one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from atlas import bookroot
from atlas.bookroot import NotABook, find_root
from atlas.upstream import partialclone
from atlas.upstream.drift import package_cli
from atlas.upstream.drift.bump import apply
from atlas.upstream.drift.gitlink import GitlinkPin
from atlas.upstream.drift.model import SHORT, DriftError, Plan
from atlas.upstream.drift.plan import plan
from atlas.upstream.drift.queue import write_queue
from atlas.upstream.drift.report import print_plan
from atlas.upstream.registry import Upstream


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
    commit and print each lab's outcome. 1 when a lab does not pass there.

    Done by ``python -m atlas.labs.drift`` in a process of its own: the labs feature imports
    atlas.upstream (for its cache keys), so atlas.upstream must not import it back."""
    command = [sys.executable, "-m", "atlas.labs.drift", "--root", str(root)]
    command += ["--name", the_plan.upstream.name, "--commit", the_plan.new]
    if the_plan.git_dir is not None:
        command += ["--git-dir", str(the_plan.git_dir)]
    if run:
        command.append("--run")
    done = subprocess.run(command, check=False, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(done.stderr)  # through this process's stderr, as the rest of the report
    return done.returncode


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
