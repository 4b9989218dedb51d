"""The warning ledger: a page's warnings are reported by every build, not only the one that
read it.

Sphinx reports a warning when it reads or writes the page that causes it; an incremental build
that re-reads nothing says nothing, so ``make check`` right after ``make html`` would pass a
book with a broken reference. The ledger keeps, in the build folder, every warning and error
of the last build that read (or wrote) each page, and a build that does not read (or write) a
page reports that page's recorded problems again, word for word, at its page and line. So a
strict build needs no re-read to be strict, and ``make html`` and ``make check`` can share one
environment.

Three kinds of entries, each refreshed when Sphinx redoes the work that produces it:

- ``read``: raised while a page was read (per page; refreshed when the page is read);
- ``consistency``: raised by the consistency check (for the whole book; refreshed whenever
  Sphinx runs the check, which it does when any page was read);
- ``write``: raised while a page was resolved or written, per builder (refreshed when that
  builder writes the page; HTML builders only: the others write every page every time).

Problems that our extensions report on every build anyway (labs, the bibliography, the lock)
are heard live and never repeated twice: a recorded problem already reported in this build is
not replayed. What is reported at ``build-finished`` (the lock compared with the book, the
labs' and the bibliography's summaries) is not recorded at all: it is computed afresh by every
build, and a recording would be replayed after its cause was fixed (``make lock`` run, then the
next ``make check`` still saying "not locked" for a page it did not re-read).
"""

from __future__ import annotations

import json
import logging as std_logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.build_phase import BuildPhase
from sphinx.util.logging import NAMESPACE, get_node_location

logger = logging.getLogger(__name__)
LEDGER = "atlas-warnings.json"
VERSION = 1
WRITE_BUILDERS = frozenset({"html", "dirhtml"})
Entry = tuple[int, str, str, str, str]  # level, type, subtype, message, location


class Ledger(std_logging.Handler):
    """Hears every warning of one build (first among the handlers of Sphinx's logger)."""

    def __init__(self, app: Sphinx) -> None:
        super().__init__(std_logging.WARNING)
        self.app = app
        # setup, read, post (the consistency check: the builder's phase), finished
        self.phase = "setup"
        self.read_docs: list[str] = []
        self.written: set[str] = set()
        self.consistency_ran = False
        self.heard: dict[str, dict[str, list[Entry]]] = {"read": {}, "post": {}}
        self.consistency: list[Entry] = []
        self.seen: set[tuple[int, str, str, str, str]] = set()
        self.replaying = False

    # -- hearing --------------------------------------------------------------------------------
    def emit(self, record: std_logging.LogRecord) -> None:
        if getattr(record, "_atlas_heard", False) or self.replaying:
            return
        record._atlas_heard = True  # type: ignore[attr-defined]
        try:
            entry = self._entry(record)
        except Exception:  # never let the ledger break a build
            return
        if entry is None:
            return
        self.seen.add(entry)
        docname = self._docname(entry[4])
        if getattr(self.app.builder, "phase", None) == BuildPhase.CONSISTENCY_CHECK:
            self.consistency.append(entry)
        elif docname is not None and self.phase in ("read", "post"):
            self.heard[self.phase].setdefault(docname, []).append(entry)

    def _entry(self, record: std_logging.LogRecord) -> Entry | None:
        message = std_logging.LogRecord.getMessage(record)
        kind = getattr(record, "type", "") or ""
        subtype = getattr(record, "subtype", "") or ""
        if kind and message.endswith(f" [{kind}.{subtype}]" if subtype else f" [{kind}]"):
            message = message.rsplit(" [", 1)[0]
        return (record.levelno, kind, subtype, message, self._location(record))

    def _location(self, record: std_logging.LogRecord) -> str:
        location: Any = getattr(record, "location", None)
        env = self.app.env
        if isinstance(location, tuple):
            docname, lineno = location
            if not docname or env is None:
                return ""
            path = env.doc2path(docname)
            return f"{path}:{lineno}" if lineno else str(path)
        if isinstance(location, nodes.Node):
            return get_node_location(location) or ""
        if isinstance(location, str) and location and ":" not in location and env is not None:
            return str(env.doc2path(location))
        return str(location or "")

    def _docname(self, location: str) -> str | None:
        env = self.app.env
        if not location or env is None:
            return None
        path = re.sub(r":\d*$", "", location)
        try:
            return env.path2doc(os.path.abspath(path))
        except Exception:
            return None

    # -- the build's phases ---------------------------------------------------------------------
    def reading(self, app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
        self.phase, self.read_docs = "read", docnames

    def read_done(self, app: Sphinx, env: BuildEnvironment) -> None:
        self.phase = "post"

    def checked(self, app: Sphinx, env: BuildEnvironment) -> None:
        self.consistency_ran = True

    def writing(self, app: Sphinx, doctree: nodes.document, docname: str) -> None:
        self.written.add(docname)

    def finishing(self, app: Sphinx, exception: BaseException | None) -> None:
        """Before every other build-finished handler: what they report is not recorded."""
        self.phase = "finished"

    # -- the end of the build -------------------------------------------------------------------
    def finish(self, app: Sphinx, exception: BaseException | None) -> None:
        if exception is not None or app.env is None:
            return
        env = app.env
        path = Path(app.doctreedir) / LEDGER
        old = _load(path)
        found = env.found_docs
        builder = app.builder.name
        read = {d: v for d, v in old["read"].items() if d in found and d not in self.read_docs}
        replay: list[Entry] = [e for v in read.values() for e in v]
        read.update({d: self.heard["read"].get(d, []) for d in self.read_docs if d in found})
        consistency = self.consistency if self.consistency_ran else old["consistency"]
        if not self.consistency_ran:
            replay += old["consistency"]
        writes = old["write"].setdefault(builder, {}) if builder in WRITE_BUILDERS else {}
        if builder in WRITE_BUILDERS:
            kept = {d: v for d, v in writes.items() if d in found and d not in self.written}
            replay += [e for v in kept.values() for e in v]
            kept.update({d: self.heard["post"].get(d, []) for d in self.written if d in found})
            old["write"][builder] = {d: v for d, v in kept.items() if v}
        self._replay(replay)
        _save(path, {
            "version": VERSION,
            "read": {d: v for d, v in sorted(read.items()) if v},
            "consistency": consistency,
            "write": old["write"],
        })  # fmt: skip

    def _replay(self, entries: list[Entry]) -> None:
        """Report again, as they were, the problems this build did not meet itself."""
        done: set[Entry] = set(self.seen)
        self.replaying = True
        try:
            for entry in entries:
                entry = tuple(entry)  # type: ignore[assignment]
                if entry in done:
                    continue
                done.add(entry)
                level, kind, subtype, message, location = entry
                logger.log(
                    level, "%s", message, location=location or None,
                    type=kind or None, subtype=subtype or None,
                )  # fmt: skip
        finally:
            self.replaying = False


def _load(path: Path) -> dict[str, Any]:
    empty: dict[str, Any] = {"read": {}, "consistency": [], "write": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return empty
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return empty

    def entries(items: Any) -> list[Entry]:
        return [tuple(e) for e in items if isinstance(e, list) and len(e) == 5]  # type: ignore[misc]

    return {
        "read": {d: entries(v) for d, v in data.get("read", {}).items()},
        "consistency": entries(data.get("consistency", [])),
        "write": {
            b: {d: entries(v) for d, v in docs.items()} for b, docs in data.get("write", {}).items()
        },
    }


def _save(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".atlas-warnings.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def install(app: Sphinx) -> Ledger:
    """Put a fresh ledger first among the handlers of Sphinx's logger (the one of an earlier
    app in this process is removed) and connect it to the build's events."""
    sphinx_logger = std_logging.getLogger(NAMESPACE)
    for old in [h for h in sphinx_logger.handlers if isinstance(h, Ledger)]:
        sphinx_logger.removeHandler(old)
    ledger = Ledger(app)
    sphinx_logger.handlers.insert(0, ledger)
    app.connect("env-before-read-docs", ledger.reading, priority=900)
    app.connect("env-updated", ledger.read_done, priority=1)
    app.connect("env-check-consistency", ledger.checked, priority=1)
    app.connect("doctree-resolved", ledger.writing, priority=1)
    app.connect("build-finished", ledger.finishing, priority=1)
    app.connect("build-finished", ledger.finish, priority=800)
    return ledger
