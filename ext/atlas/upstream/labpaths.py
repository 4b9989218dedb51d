"""Upstream files that labs read, found in the labkit's source without running it.

Citations say which blobs a page quotes, and ``fetch`` brings exactly those. Labs go further:
some run an upstream's own code at the pin (Megatron's rank generator, EAGLE's tree buffers,
slime's packing), read from the same object stores, which never fetch on a read. A file that a
lab reads but no page cites would then be missing on a fresh machine, and the lab would skip.

The labkit names those files as string literals (``"slime/utils/misc.py"``, often through a
module constant), so the set of candidate paths is every string literal in ``atlas/labkit``
that looks like a relative file path. ``fetch`` looks each candidate up in every upstream's
tree at its pin and brings the blobs of those that exist there; a candidate that is not a file
of that upstream is simply not one of its files, and says nothing.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

# A relative path to a source or config file: no spaces, no leading slash or dot-dot.
PATH_LITERAL = re.compile(
    r"^(?!/)(?!.*\.\.)[\w.+-]+(?:/[\w.+-]+)*\.(?:py|pyi|c|cc|cpp|cu|cuh|h|hpp|ts|tsx|rs|toml|"
    r"json|yaml|yml|txt|md|sh)$"
)


def labkit_dir(book_root: Path) -> Path:
    return Path(book_root) / "ext" / "atlas" / "labkit"


@lru_cache(maxsize=8)
def _literals(folder: str, stamp: float) -> frozenset[str]:
    found: set[str] = set()
    for file in sorted(Path(folder).rglob("*.py")):
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue  # the build reports a broken labkit module where a lab imports it
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if PATH_LITERAL.match(node.value):
                    found.add(node.value)
    return frozenset(found)


def lab_path_candidates(book_root: Path) -> frozenset[str]:
    """Every string literal under ``ext/atlas/labkit`` shaped like a relative file path."""
    folder = labkit_dir(book_root)
    if not folder.is_dir():
        return frozenset()
    stamp = max((p.stat().st_mtime for p in folder.rglob("*.py")), default=0.0)
    return _literals(str(folder), stamp)
