"""The review queue: what a bump or a drift left for a human, kept in a file after the command.

``drift`` and ``bump`` write ``_build/upstream-review/NAME.json`` (for ``review``) and
``NAME.txt`` (for people) with one entry per citation left behind: its page and line, the
sentence of the page that introduces it, the citation as the page now writes it, the diff of
the old text against the new, and the suggestion of :mod:`.suggest` (a citation at the new
pin that passes the citation's own guard), when there is one. ``python -m atlas.upstream
review NAME`` (:mod:`.review`) walks it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from atlas.bookroot import BUILD
from atlas.upstream.drift.model import Plan

FOLDER = "upstream-review"
VERSION = 1
FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})")
SENTENCE_END = re.compile(r"(?<=[.!?:])\s+(?=[A-Z`{(\[*_])")


@dataclass
class QueueEntry:
    """One citation to review. ``citation`` is its text in the page now (after a bump: at the
    old pin); ``suggestion`` is the text to put there instead (None: nothing passed)."""

    page: str
    line: int
    kind: str
    status: str
    citation: str
    sentence: str
    diff: str
    suggestion: str | None = None
    suggestion_note: str = ""
    suggestion_linemap: dict[int, int] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict) -> QueueEntry:
        data = dict(data)
        data["suggestion_linemap"] = {
            int(k): int(v) for k, v in data.get("suggestion_linemap", {}).items()
        }
        return cls(**data)


@dataclass
class Queue:
    upstream: str
    old: str  # the pin the citations were written for
    new: str  # the pin they should move to
    applied: bool  # True after a bump (the pin has moved); False after a drift
    entries: list[QueueEntry]

    def to_json(self) -> dict:
        return {"version": VERSION, **asdict(self)}


def queue_paths(book_root: Path, name: str) -> tuple[Path, Path]:
    folder = Path(book_root) / BUILD / FOLDER
    return folder / f"{name}.json", folder / f"{name}.txt"


def introducing_sentence(page_text: str, line: int, kind: str) -> str:
    """The sentence that introduces a citation: for a role, the sentence of its line that
    holds it; for a directive block, the last sentence of the prose just above the fence."""
    lines = page_text.splitlines()
    if kind == "role":
        here = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        parts = SENTENCE_END.split(here)
        return next((p for p in parts if "{upstream}" in p), here)
    prose: list[str] = []
    i = line - 2
    while i >= 0 and not lines[i].strip():
        i -= 1
    while i >= 0 and lines[i].strip() and not FENCE.match(lines[i]):
        prose.insert(0, lines[i].strip())
        i -= 1
    parts = SENTENCE_END.split(" ".join(prose))
    return parts[-1] if parts else ""


def build_queue(book_root: Path, the_plan: Plan, applied: bool) -> Queue:
    """The entries of the citations the plan leaves behind, in page order."""
    texts: dict[str, str] = {}
    entries = []
    for rec in sorted(the_plan.records, key=lambda r: (r.page, r.line)):
        if rec.carried:
            continue
        if rec.page not in texts:
            try:
                texts[rec.page] = (Path(book_root) / rec.page).read_text(encoding="utf-8")
            except OSError:
                texts[rec.page] = ""
        entries.append(
            QueueEntry(
                rec.page, rec.line, rec.kind, str(rec.status),
                rec.new if applied else rec.old,
                introducing_sentence(texts[rec.page], rec.line, rec.kind),
                rec.detail, rec.suggestion, rec.suggestion_note, rec.suggestion_linemap,
            )
        )  # fmt: skip
    return Queue(the_plan.upstream.name, the_plan.old, the_plan.new, applied, entries)


def queue_text(queue: Queue) -> str:
    """The queue for people: one block per citation."""
    head = "bumped" if queue.applied else "drift (not applied)"
    out = [
        f"review queue of {queue.upstream}: {queue.old[:10]} -> {queue.new[:10]}, {head}; "
        f"{len(queue.entries)} citation(s); walk it with "
        f"`python -m atlas.upstream review {queue.upstream}`"
    ]
    for i, e in enumerate(queue.entries, 1):
        out += [
            "",
            f"[{i}] {e.page}:{e.line}  {e.status}  {e.citation}",
            f"    sentence: {e.sentence}",
            f"    suggestion: {e.suggestion} ({e.suggestion_note})"
            if e.suggestion
            else "    suggestion: none passed its guard",
            e.diff,
        ]
    return "\n".join(out) + "\n"


def write_queue(book_root: Path, the_plan: Plan, applied: bool) -> Path:
    """Write the queue (JSON and text); returns the text file's path."""
    queue = build_queue(book_root, the_plan, applied)
    return save_queue(book_root, queue)


def save_queue(book_root: Path, queue: Queue) -> Path:
    as_json, as_text = queue_paths(book_root, queue.upstream)
    as_json.parent.mkdir(parents=True, exist_ok=True)
    as_json.write_text(json.dumps(queue.to_json(), indent=1, ensure_ascii=False), encoding="utf-8")
    as_text.write_text(queue_text(queue), encoding="utf-8")
    return as_text


def load_queue(book_root: Path, name: str) -> Queue | None:
    """The queue of upstream NAME, or None when there is none (or it is unreadable)."""
    as_json, _ = queue_paths(book_root, name)
    try:
        data = json.loads(as_json.read_text(encoding="utf-8"))
        if data.get("version") != VERSION:
            return None
        entries = [QueueEntry.from_json(e) for e in data["entries"]]
        return Queue(data["upstream"], data["old"], data["new"], data["applied"], entries)
    except (OSError, ValueError, KeyError, TypeError):
        return None
