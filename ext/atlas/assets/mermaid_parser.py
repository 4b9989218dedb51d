"""Mermaid's own parser, run in node on the pinned package, with its verdicts cached by hash.

The browser parses a diagram only when a reader opens the page, and then draws "Syntax error"
with no message; only the PDF path (mermaid-cli, which needs Chromium) parsed diagrams at build
time. ``mermaid.parse`` needs no browser: ``mermaid_parse.mjs`` runs it in node on the
``mermaid`` package ``package-lock.json`` pins, for every diagram of a build that the cache has
not seen, in one node process.

The verdict depends only on the diagram's text and the mermaid version, so it is cached under
their hash (``Verdicts``, a JSON file in the build folder): a no-op build starts no node, and a
clean build pays one node start plus a few milliseconds per diagram.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "mermaid_parse.mjs"
TIMEOUT = 300.0  # seconds for one node run (dozens of diagrams take a few seconds)
# mermaid's own front-matter pattern (it strips this block, and line numbers start after it)
FRONT_MATTER = re.compile(r"^-{3}\s*[\n\r](.*?)[\n\r]-{3}\s*[\n\r]+", re.S)


@dataclass(frozen=True)
class ParseError:
    """Why mermaid cannot parse a diagram: its message, and the line of the diagram's text
    (1-based, counting the front matter) it names, when it names one."""

    message: str
    line: int | None


class ParserUnavailable(Exception):
    """node, the mermaid package or the parse script cannot be run; the message says which."""


def mermaid_version(node_modules: Path) -> str:
    try:
        data = json.loads((node_modules / "mermaid" / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ParserUnavailable(f"the mermaid package is not in {node_modules} ({exc})") from None
    return str(data.get("version", "?"))


def diagram_hash(text: str, version: str) -> str:
    return hashlib.sha256(f"mermaid {version}\0{text}".encode()).hexdigest()[:32]


def front_matter_lines(text: str) -> int:
    """Lines of the front matter mermaid strips before parsing (its line numbers start after)."""
    match = FRONT_MATTER.match(text)
    return match.group(0).count("\n") if match else 0


class Verdicts:
    """The cache: diagram hash -> None (parses) or its :class:`ParseError`, in one JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.changed = False
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raw = {}
        self.known: dict[str, ParseError | None] = {
            key: None if value is None else ParseError(str(value[0]), value[1])
            for key, value in (raw.items() if isinstance(raw, dict) else [])
            if value is None or (isinstance(value, list) and len(value) == 2)
        }

    def missing(self, hashes: dict[str, str]) -> dict[str, str]:
        return {h: text for h, text in hashes.items() if h not in self.known}

    def record(self, found: dict[str, ParseError | None]) -> None:
        self.known.update(found)
        self.changed = self.changed or bool(found)

    def save(self) -> None:
        """Write atomically (a build killed mid-write leaves the old cache, never half a file)."""
        if not self.changed:
            return
        data = {k: None if v is None else [v.message, v.line] for k, v in self.known.items()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".atlas-mermaid.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, sort_keys=True)
            os.chmod(tmp, 0o644)  # mkstemp makes it private; the build folder's files are not
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.changed = False


def parse_all(texts: dict[str, str], node_modules: Path) -> dict[str, ParseError | None]:
    """Parse every diagram (id -> text) in one node process; id -> None or its error."""
    if not texts:
        return {}
    node = shutil.which("node")
    if node is None:
        raise ParserUnavailable("node is not on PATH")
    payload = json.dumps([{"id": key, "text": text} for key, text in texts.items()])
    try:
        done = subprocess.run(
            [node, str(SCRIPT), str(node_modules)],
            input=payload,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ParserUnavailable(f"node could not parse the diagrams ({exc})") from None
    try:
        results = json.loads(done.stdout)
    except ValueError:
        detail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ParserUnavailable(
            f"the mermaid parser failed (exit {done.returncode}): {' / '.join(detail)}"
        ) from None
    return {
        key: None if value is None else ParseError(str(value["message"]), value.get("line"))
        for key, value in results.items()
    }
