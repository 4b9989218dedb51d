"""``python -m atlas.upstream drift|bump NAME VERSION`` for a package upstream: arguments and
output. :mod:`.cli` hands a NAME that :func:`is_package` recognises here; the plan is made by
:mod:`.package_plan` and applied by :mod:`.bump` with the pin of :mod:`.package_pin`."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from atlas import bookroot
from atlas.bookroot import BookPaths, NotABook
from atlas.upstream.drift.bump import apply
from atlas.upstream.drift.model import DriftError
from atlas.upstream.drift.package_pin import PackagePin
from atlas.upstream.drift.package_plan import plan
from atlas.upstream.drift.report import print_plan
from atlas.upstream.packages.files import PackageError
from atlas.upstream.packages.registry import PYPROJECT, PackageRegistryError, load_packages


def book_root(given: Path | None) -> Path:
    """The book's root, found as the other maintainer commands find it."""
    try:
        return BookPaths.from_cli(given).root
    except NotABook as exc:
        raise DriftError(str(exc)) from None


def is_package(argv: list[str]) -> bool:
    """Whether ``drift``/``bump`` ARGV names a package upstream of the book (not a git one)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("name", nargs="?")
    parser.add_argument("--root", type=Path, default=None)
    args, _ = parser.parse_known_args([a for a in argv if a not in ("drift", "bump")])
    if not args.name:
        return False
    try:
        return args.name in load_packages(book_root(args.root))
    except (DriftError, PackageRegistryError):
        return False


def parse_args(command: str, argv: list[str]) -> argparse.Namespace:
    """The arguments of a package ``drift`` or ``bump`` (``--wheel``, ``--old-wheel``)."""
    parser = argparse.ArgumentParser(
        prog=f"python -m atlas.upstream {command}",
        description=f"{command} a package upstream: compare the pinned version's files with "
        "another version's wheel" + (" and move the pin" if command == "bump" else ""),
    )
    parser.add_argument("name", metavar="NAME")
    parser.add_argument("rev", metavar="VERSION")
    parser.add_argument("--wheel", type=Path, default=None, help="the new version's wheel file")
    parser.add_argument(
        "--old-wheel",
        type=Path,
        default=None,
        help="the pinned version's wheel (default: installed)",
    )
    if command == "bump":
        parser.add_argument("--dry-run", action="store_true", help="print the plan only")
    parser.add_argument("--json", action="store_true", help="one JSON record per citation")
    parser.add_argument("--root", type=Path, default=None, help="the book's root (default: here)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    argv = list(argv)
    command = argv.pop(0) if argv and argv[0] in ("drift", "bump") else "drift"
    args = parse_args(command, argv)
    try:
        root = book_root(args.root)
    except DriftError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    try:
        with tempfile.TemporaryDirectory(prefix="atlas-wheel-") as work:
            the_plan, new_files = plan(
                root, args.name, args.rev, args.wheel, args.old_wheel, Path(work)
            )
            result = None
            if command == "bump" and not args.dry_run:
                result = apply(root, the_plan, PackagePin(root, the_plan, new_files))
    except (DriftError, PackageError) as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    print_plan(the_plan, args.json)
    if result is not None:
        up = the_plan.upstream
        print(
            f"bumped {up.name} {the_plan.old} -> {the_plan.new}: {len(result['pages'])} page(s) "
            f"rewritten, {result['lock_moved']} lock entries moved"
            + (
                f", {result['lock_unknown']} not computable "
                f"(run `{bookroot.command(root, 'lock')}`)"
                if result["lock_unknown"]
                else ""
            )
            + f"; {PYPROJECT} now pins {up.name}=={the_plan.new}: run `make setup` to install it",
            file=sys.stderr,
        )
    return 0
