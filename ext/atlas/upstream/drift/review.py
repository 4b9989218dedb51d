"""``python -m atlas.upstream review NAME``: walk the review queue a bump left (:mod:`.queue`).

For each citation left behind, one decision:

- **accept** the suggestion: the page's citation is rewritten to it (``:emphasize-lines:``
  carried through the suggestion's line map);
- **keep** it at the old pin with a reason, recorded in the page
  (:mod:`atlas.upstream.behind`), which
  silences ``upstream.behind`` for it;
- **skip**: it stays in the queue, and ``upstream.behind`` keeps warning.

Interactive by default (one prompt per citation); scriptable with ``--accept-all-suggestions``
(every suggestion accepted) and ``--keep-rest REASON`` (every citation not accepted kept with
that reason). Accepted and kept citations leave the queue, the lock is refreshed
(:func:`atlas.upstream.check.run_lock`: the same rewrite as ``make lock``), and the queue file
is rewritten with what was skipped.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from atlas.bookroot import BookPaths, NotABook, command
from atlas.upstream.behind import keep_lines
from atlas.upstream.drift.queue import Queue, QueueEntry, load_queue, save_queue
from atlas.upstream.pagewriter import CitationEdit, PageEditError, rewrite_pages, write_atomic
from atlas.upstream.registry import load_registry

ACCEPT, KEEP, SKIP = "accept", "keep", "skip"
Decision = tuple[str, str]  # (ACCEPT | KEEP | SKIP, reason)
Ask = Callable[[QueueEntry], Decision | None]  # None: stop asking (quit)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m atlas.upstream review",
        description="Walk the review queue of NAME: accept, keep with a reason, or skip.",
    )
    parser.add_argument("name", metavar="NAME")
    parser.add_argument(
        "--accept-all-suggestions", action="store_true", help="accept every suggestion"
    )
    parser.add_argument(
        "--keep-rest", metavar="REASON", help="keep every citation not accepted, with REASON"
    )
    parser.add_argument("--list", action="store_true", help="print the queue, decide nothing")
    parser.add_argument("--root", type=Path, default=None, help="the book's root (default: here)")
    return parser.parse_args(argv)


def prompt(entry: QueueEntry) -> Decision | None:
    """Ask on the terminal: [a]ccept, [k]eep REASON, [s]kip, [q]uit."""
    print(f"\n{entry.page}:{entry.line}  {entry.status}  {entry.citation}")
    print(f"  {entry.sentence}")
    print(entry.diff)
    if entry.suggestion:
        print(f"  suggestion: {entry.suggestion} ({entry.suggestion_note})")
    choices = "[a]ccept, [k]eep, [s]kip, [q]uit" if entry.suggestion else "[k]eep, [s]kip, [q]uit"
    while True:
        answer = input(f"{choices}? ").strip().lower()
        if answer.startswith("q"):
            return None
        if answer.startswith("a") and entry.suggestion:
            return ACCEPT, ""
        if answer.startswith("s"):
            return SKIP, ""
        if answer.startswith("k"):
            reason = input("why it stays behind (recorded in the page): ").strip()
            if reason:
                return KEEP, reason


def scripted(accept_all: bool, keep_reason: str | None) -> Ask:
    def ask(entry: QueueEntry) -> Decision:
        if accept_all and entry.suggestion:
            return ACCEPT, ""
        if keep_reason:
            return KEEP, keep_reason
        return SKIP, ""

    return ask


def decide(queue: Queue, ask: Ask) -> dict[int, Decision]:
    """A decision per entry (by index); entries after a quit are skipped."""
    decisions: dict[int, Decision] = {}
    for i, entry in enumerate(queue.entries):
        answer = ask(entry)
        if answer is None:
            break
        decisions[i] = answer
    return decisions


def locate(root: Path, entry: QueueEntry) -> int | None:
    """The line that holds the entry's citation now: its recorded line, else the line holding
    it nearest to that one (prose edited above it since the bump moves it; of two identical
    citations, each keeps its own); None when no line holds it."""
    try:
        lines = (root / entry.page).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    if 0 < entry.line <= len(lines) and entry.citation in lines[entry.line - 1]:
        return entry.line
    found = [i + 1 for i, line in enumerate(lines) if entry.citation in line]
    return min(found, key=lambda n: (abs(n - entry.line), n)) if found else None


def apply_decisions(root: Path, queue: Queue, decisions: dict[int, Decision]) -> list[str]:
    """Rewrite the pages: accepted citations first (no line moves), then the reasons of kept
    ones, from the bottom of each page up (an inserted line moves only what is below it).
    Returns one message per entry that could not be applied (it stays in the queue)."""
    problems: list[str] = []
    for i, (what, _) in decisions.items():
        e = queue.entries[i]
        line = locate(root, e) if what != SKIP else None
        if what != SKIP and line is None:
            problems.append(f"{e.page}:{e.line}: the citation {e.citation!r} is not there")
            decisions[i] = (SKIP, "")
            continue
        if line is not None:
            e.line = line
        if what != ACCEPT:
            continue
        assert e.suggestion is not None
        try:
            rewrite_pages(
                root,
                [
                    CitationEdit(
                        e.page, e.line, e.kind, e.citation, e.suggestion, e.suggestion_linemap
                    )
                ],
            )
        except (PageEditError, OSError) as exc:
            problems.append(f"{e.page}:{e.line}: {exc}")
            decisions[i] = (SKIP, "")
    kept = sorted(
        ((queue.entries[i], reason) for i, (what, reason) in decisions.items() if what == KEEP),
        key=lambda item: (item[0].page, -item[0].line),
    )
    for page in sorted({e.page for e, _ in kept}):
        path = root / page
        with path.open(encoding="utf-8", newline="") as fh:
            lines = fh.read().splitlines(keepends=True)
        for e, reason in (k for k in kept if k[0].page == page):
            keep_lines(lines, e.line, e.kind, e.citation, reason)
        write_atomic(path, "".join(lines))
    return problems


def main(argv: list[str] | None = None, ask: Ask | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "review":
        argv.pop(0)
    args = parse_args(argv)
    try:
        paths = BookPaths.from_cli(args.root)
    except NotABook as exc:
        print(f"review: {exc}", file=sys.stderr)
        return 2
    root = paths.root
    queue = load_queue(root, args.name)
    if queue is None:
        print(
            f"review: no review queue for {args.name}; "
            f"run `{command(paths, 'drift', args.name)}` or bump it first",
            file=sys.stderr,
        )
        return 2
    if args.list or not queue.entries:
        from atlas.upstream.drift.queue import queue_text

        print(queue_text(queue), end="")
        return 0
    up = load_registry(root).get(args.name)
    pin = up.pin if up else None
    if not queue.applied and pin != queue.new:
        print(
            f"review: the queue of {args.name} is a drift's; the pin is still "
            f"{(pin or '?')[:10]}: bump it to {queue.new[:10]} first",
            file=sys.stderr,
        )
        return 2
    if ask is None:
        ask = (
            scripted(args.accept_all_suggestions, args.keep_rest)
            if args.accept_all_suggestions or args.keep_rest or not sys.stdin.isatty()
            else prompt
        )
    decisions = decide(queue, ask)
    problems = apply_decisions(root, queue, decisions)
    for problem in problems:
        print(f"review: {problem}", file=sys.stderr)
    done = {i for i, (what, _) in decisions.items() if what in (ACCEPT, KEEP)}
    counts = {w: sum(d[0] == w for d in decisions.values()) for w in (ACCEPT, KEEP, SKIP)}
    queue.entries = [e for i, e in enumerate(queue.entries) if i not in done]
    save_queue(root, queue)
    from atlas.upstream.check import run_lock

    status = run_lock(paths) if done else 0
    print(
        f"review {args.name}: {counts[ACCEPT]} accepted, {counts[KEEP]} kept with a reason, "
        f"{counts[SKIP]} skipped; {len(queue.entries)} left in the queue",
        file=sys.stderr,
    )
    return 2 if problems else status
