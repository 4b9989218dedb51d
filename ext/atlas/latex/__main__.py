"""Command line of atlas.latex: ``python -m atlas.latex build --source source --build _build``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from atlas.bookroot import BookPaths, NotABook
from atlas.latex import build, tools


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m atlas.latex", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="check the system tools, then build BUILD/pdf/atlas.pdf")
    b.add_argument("--root", type=Path, default=None, help="the book (default: the one here)")
    b.add_argument("--source", type=Path, default=None, help="the book's pages (ROOT/source)")
    b.add_argument("--build", type=Path, default=None, help="the build folder (ROOT/_build)")
    b.add_argument("--conf-dir", type=Path, default=None, help="the folder of conf.py (ROOT)")
    b.add_argument("--name", default="atlas", help="the .tex target of latex_documents")
    b.add_argument(
        "--edition",
        default=None,
        metavar="LANGUAGE:FOLDER",
        help="a translated edition, e.g. zh_CN:zh: BUILD/pdf/atlas-zh.pdf",
    )
    b.add_argument("sphinx_args", nargs="*", help="passed to Sphinx (after --)")
    sub.add_parser("check", help="only check the system tools")
    args = parser.parse_args(argv)
    if args.command == "check":
        absent = tools.missing(tools.requirements())
        print(tools.report(absent) if absent else "All the PDF's system tools are installed.")
        return 3 if absent else 0
    edition = None
    if args.edition:
        language, _, folder = args.edition.partition(":")
        if not language or not folder:
            parser.error(f"--edition {args.edition}: write LANGUAGE:FOLDER, e.g. zh_CN:zh")
        edition = build.Edition(language, folder)
    if args.root is None and None not in (args.source, args.build, args.conf_dir):
        # every folder given: no book needs to be found
        return build.build(
            args.source, args.build, args.conf_dir, args.name, args.sphinx_args, edition
        )
    try:
        paths = BookPaths.from_cli(args.root)
    except NotABook as exc:
        print(f"python -m atlas.latex build: {exc}", file=sys.stderr)
        return 2
    return build.build(
        args.source or paths.source,
        args.build or paths.build,
        args.conf_dir or paths.conf_dir,
        args.name,
        args.sphinx_args,
        edition,
    )


if __name__ == "__main__":
    sys.exit(main())
