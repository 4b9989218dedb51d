"""``python -m atlas.refs.report _build/linkcheck``: the link check, readable.

Reads ``atlas-linkcheck.json`` (written by the builder of :mod:`atlas.refs.linkcheck`), prints
one section per category with page and line, and writes the same text to ``report.txt``.
Exit status: 0 when nothing is broken, unreachable, timed out or rate-limited; 1 otherwise;
2 when there is no result to read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from atlas.bookroot import BookPaths, NotABook
from atlas.refs.linkcheck import REPORT_JSON

SECTIONS = [
    ("broken", "Broken (the host answered: missing page, missing anchor, wrong lines)"),
    ("unreachable", "Unreachable (no answer: name resolution, connection refused, host down)"),
    ("timeout", "Timed out"),
    ("rate-limited", "Rate-limited (gave up waiting)"),
    ("redirected", "Redirected (not an allowed redirect: update the link)"),
    ("verified-locally", "Verified locally from git objects (pinned GitHub links)"),
    ("working", "Working"),
    ("skipped", "Skipped (ignored by configuration, or not checkable)"),
]
FAILING = {"broken", "unreachable", "timeout", "rate-limited"}
QUIET = {"working"}  # listed only with --all


def render(data: dict[str, Any], *, show_all: bool = False) -> str:
    links = data.get("links", [])
    counts = data.get("counts", {})
    lines = [
        f"Link check: {len(links)} links in {data.get('elapsed_s', 0):g} s, "
        f"{data.get('requests_sent', 0)} requests sent",
        "  " + ", ".join(f"{name} {counts.get(name, 0)}" for name, _ in SECTIONS),
    ]
    cached = sum(1 for link in links if link.get("source") == "cache")
    if cached:
        lines.append(f"  {cached} answered from the cache (atlas_linkcheck_cache_days)")
    for reason in data.get("hosts_down", {}).values():
        lines.append(f"  host not asked again: {reason}")
    for name, title in SECTIONS:
        chosen = [link for link in links if link.get("category") == name]
        if not chosen or (name in QUIET and not show_all):
            continue
        lines += ["", f"{title}: {len(chosen)}"]
        for link in chosen:
            info = f" - {link['info']}" if link.get("info") else ""
            extra = []
            if link.get("rate_limited"):
                extra.append(f"429 x{link['rate_limited']}")
            if link.get("source") == "cache":
                extra.append("cached")
            note = f" [{', '.join(extra)}]" if extra else ""
            where = f"{link['filename']}:{link['lineno']}"
            if link.get("bib"):
                where = link["bib"]  # a bibliography link: point at the entry to fix
            lines.append(f"  {where}: {link['uri']}{info}{note}")
    unverified = [link for link in links if link.get("unverified")]
    if unverified:
        lines += [
            "",
            f"Unverified offline (pinned GitHub links without local objects): {len(unverified)}",
        ]
        lines += [
            f"  {link['filename']}:{link['lineno']}: {link['uri']} - {link['unverified']}"
            for link in unverified
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m atlas.refs.report", description="Print and save the link-check report."
    )
    parser.add_argument(
        "outdir", nargs="?", type=Path, default=None,
        help="the linkcheck output folder (default: _build/linkcheck of the book)",
    )  # fmt: skip
    parser.add_argument("--all", action="store_true", help="list working links too")
    parser.add_argument(
        "--root", type=Path, default=None, help="the book root (default: the book around here)"
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    show_all = args.all
    outdir = args.outdir
    if outdir is None:
        try:
            outdir = BookPaths.from_cli(args.root).build / "linkcheck"
        except NotABook as exc:
            print(f"atlas.refs.report: {exc}", file=sys.stderr)
            return 2
    source = outdir / REPORT_JSON
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(
            f"atlas.refs.report: no link-check result in {source} ({exc}); run `make linkcheck`",
            file=sys.stderr,
        )
        return 2
    text = render(data, show_all=show_all)
    (outdir / "report.txt").write_text(text, encoding="utf-8")
    try:
        print(text, end="")
        print(f"Report: {outdir / 'report.txt'}; JSON: {source} (Sphinx's own: output.json)")
    except BrokenPipeError:  # `... | head`: the report file is complete anyway
        pass
    return 1 if any(link.get("category") in FAILING for link in data.get("links", [])) else 0


if __name__ == "__main__":
    raise SystemExit(main())
