"""What parsing every mermaid diagram of the book costs a build (atlas.assets.diagrams).

The diagrams are read from the book's pages (fenced ```mermaid and ```{mermaid} blocks), then
parsed as the build parses them, in one run:

- ``batched``: one node process for all of them (what a clean build pays);
- ``per_diagram``: one node process per diagram (the baseline: what a check at each page
  would pay);
- ``cached``: the verdict cache answering for all of them (what a no-op build, or a build
  that changes no diagram, pays: no node at all).

Last line: one JSON object with the seconds and the ratios against the baseline.

    .venv/bin/python benchmarks/mermaid_parse.py
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from pathlib import Path

from atlas.assets.mermaid_parser import Verdicts, diagram_hash, mermaid_version, parse_all

BOOK = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*\{?mermaid\}?\s*$")
OPTION = re.compile(r"^\s*:[\w-]+:")


def book_diagrams(source: Path) -> list[str]:
    """The text of every mermaid block of the book's pages (options dropped)."""
    found = []
    for page in sorted(source.rglob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            match = FENCE.match(lines[i].strip())
            if match:
                body = []
                i += 1
                while i < len(lines) and not lines[i].strip().startswith(match["fence"]):
                    if not OPTION.match(lines[i]):
                        body.append(lines[i])
                    i += 1
                found.append("\n".join(body) + "\n")
            i += 1
    return found


def main() -> int:
    modules = BOOK / "node_modules"
    texts = {str(i): text for i, text in enumerate(book_diagrams(BOOK / "source"))}
    start = time.perf_counter()
    verdicts = parse_all(texts, modules)
    batched = time.perf_counter() - start
    start = time.perf_counter()
    for key, text in texts.items():
        parse_all({key: text}, modules)
    per_diagram = time.perf_counter() - start
    version = mermaid_version(modules)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Verdicts(Path(tmp) / "cache.json")
        cache.record({diagram_hash(t, version): verdicts[k] for k, t in texts.items()})
        cache.save()
        start = time.perf_counter()
        again = Verdicts(Path(tmp) / "cache.json")
        hashes = {diagram_hash(t, version): t for t in texts.values()}
        assert not again.missing(hashes)
        cached = time.perf_counter() - start
    broken = sum(v is not None for v in verdicts.values())
    print(f"{len(texts)} diagrams ({broken} broken), mermaid {version}")
    print(f"batched:     {batched:8.2f} s (one node run)")
    print(f"per diagram: {per_diagram:8.2f} s (baseline: one node run each)")
    print(f"cached:      {cached:8.4f} s (no node)")
    print(
        json.dumps(
            {
                "diagrams": len(texts),
                "batched_s": round(batched, 3),
                "per_diagram_s": round(per_diagram, 3),
                "cached_s": round(cached, 5),
                "batched_over_per_diagram": round(batched / per_diagram, 4),
                "cached_over_per_diagram": round(cached / per_diagram, 6),
            }
        )  # fmt: skip
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
