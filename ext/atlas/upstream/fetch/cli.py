"""``python -m atlas.upstream fetch [NAME...] [--if-needed]``: the command and what it prints.

One progress line per upstream, its notes (absent paths, blobs the remote would not send, bad
revisions at their page and line), then one summary line. ``--if-needed`` (what ``make html``
and ``make pdf`` run first) does nothing when every cited object is here, and offline says so
in one line and exits 0, so that the book builds with placeholders.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import TextIO

from atlas.bookroot import BookPaths, NotABook, command
from atlas.git.store import GitStoreError
from atlas.upstream.fetch.needs import Needs, collect_needs
from atlas.upstream.fetch.transfer import Result, fetch_upstream, missing_counts
from atlas.upstream.partialclone import FetchError, Progress, human, is_offline
from atlas.upstream.registry import Upstream, load_registry


def fetch_all(
    book_root: Path,
    needs: dict[str, Needs],
    quick: bool = False,
    stream: TextIO | None = None,
    stop_offline: bool = False,
) -> list[Result]:
    """Fetch every upstream in ``needs``; one Result each (``error`` set when it failed).

    With ``stop_offline``, the first failure that is the network's ends the run: the other
    upstreams would only fail the same way, slowly.
    """
    width = max((len(n) for n in needs), default=8)
    results = []
    for name, need in needs.items():
        progress = Progress(name, width, stream)
        unresolved = [
            f"{where}: {name}@{rev}: {why}"
            for rev, why in need.unresolved.items()
            for where in need.where(rev)
        ]
        try:
            result = fetch_upstream(book_root, need, progress, quick)
            result.bad_revs = unresolved + result.bad_revs
        except (FetchError, GitStoreError, OSError) as exc:
            results.append(Result(name, error=str(exc), bad_revs=unresolved))
            progress.done(f"FAILED: {exc}")
            if stop_offline and is_offline(str(exc)):
                break
            continue
        cited = sum(len(p) for p in need.paths.values())
        if result.missing_before == 0:
            progress.done(f"up to date: {cited} cited file(s) present, nothing transferred")
        else:
            progress.done(
                f"{result.commits} commit(s) with trees, {result.blobs} blob(s): "
                f"{result.objects} objects, {human(result.bytes)} transferred"
            )
        for absent in result.absent_paths:
            progress.done(f"note: {absent} does not exist (see `{command(book_root, 'check')}`)")
        for sha in result.unavailable:
            progress.done(f"note: the remote would not send blob {sha} (absent from that mirror?)")
        for line in result.bad_revs:
            progress.done(f"bad revision: {line}")
        results.append(result)
    return results


def summary(results: list[Result]) -> str:
    ok = [r for r in results if r.error is None]
    moved = sum(r.bytes for r in ok)
    tail = "nothing transferred" if moved == 0 else f"{human(moved)} transferred"
    bad = sum(len(r.bad_revs) for r in results)
    note = f"; {bad} citation(s) name a revision that does not exist (listed above)" if bad else ""
    return (
        f"upstreams: {len(ok)}/{len(results)} ready; {sum(r.objects for r in ok)} objects, "
        f"{tail}{note}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m atlas.upstream fetch",
        description="Fetch the objects the book cites (bare partial clones, least transfer).",
    )
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help="upstreams to fetch (default: all)"
    )
    parser.add_argument(
        "--if-needed",
        action="store_true",
        help="do nothing when every cited object is present; offline, say so and exit 0",
    )
    parser.add_argument("--root", type=Path, default=None, help="the book's root (default: here)")
    parser.add_argument("--source", default="source", help="pages folder under the root")
    args = parser.parse_args((argv or [])[1:] if argv and argv[0] == "fetch" else argv)
    try:
        root = BookPaths.from_cli(args.root).root
    except NotABook as exc:
        print(f"fetch: {exc}", file=sys.stderr)
        return 2
    registry = load_registry(root)
    unknown = [n for n in args.names if n not in registry]
    if unknown:
        print(
            f"fetch: unknown upstream(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(registry))}",
            file=sys.stderr,
        )
        return 2
    link_only = [n for n in args.names if not registry[n].pin]
    if link_only:
        print(
            f"fetch: {', '.join(link_only)} is link-only (no gitlink pin); nothing to fetch",
            file=sys.stderr,
        )
    try:
        return _run(root, registry, args.names, args.if_needed, args.source)
    except KeyboardInterrupt:
        print(
            "\nfetch: interrupted; run it again to finish (nothing is left half-made)",
            file=sys.stderr,
        )
        return 130


def _run(
    root: Path, registry: dict[str, Upstream], names: list[str], if_needed: bool, source: str
) -> int:
    needs = collect_needs(root, registry, names or None, source)
    if not if_needed:
        results = fetch_all(root, needs)
        print(summary(results), file=sys.stderr)
        return 1 if any(r.error or r.bad_revs for r in results) else 0
    counts = {n: c for n, c in missing_counts(root, needs).items() if c}
    if not counts:
        return 0
    quiet = io.StringIO()
    results = fetch_all(
        root, {n: needs[n] for n in counts}, quick=True, stream=quiet, stop_offline=True
    )
    failed = [r for r in results if r.error]
    if failed:
        print(
            f"upstreams: {sum(counts.values())} cited object(s) missing and not fetched "
            f"({failed[0].name}: {failed[0].error}); building with placeholders. "
            "Run `make upstreams` when online.",
            file=sys.stderr,
        )
    else:
        print(summary(results), file=sys.stderr)
    return 0
