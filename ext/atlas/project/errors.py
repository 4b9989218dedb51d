"""One clean error for a broken project file: where, what is wrong, the fix; then exit 2.

A broken ``upstreams.lock``, ``references.bib``, ``.gitmodules``, configuration value or asset
folder is not a bug of Sphinx or of an extension, and is not reported as one: no traceback, no
versions block, no request to report it to Sphinx's developers. Each problem is one line,
``FILE:LINE: ERROR: what is wrong; the fix`` (``FILE: ERROR: ...`` when the line is not
known), and the build stops with exit status 2 before it reads a page.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

EXIT_STATUS = 2


@dataclass(frozen=True)
class Problem:
    """A broken project file: where (a file, or "command line"), the line if known, the
    message (what is wrong, then the fix)."""

    where: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        place = f"{self.where}:{self.line}" if self.line else self.where
        return f"{place}: ERROR: {self.message}"


def shown(path: Path | str) -> str:
    """A path as the reader can use it from here: relative when below the current folder."""
    path = Path(path)
    try:
        return os.path.relpath(path.resolve(), Path.cwd()) if _below_cwd(path) else str(path)
    except (OSError, ValueError):
        return str(path)


def _below_cwd(path: Path) -> bool:
    try:
        path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return False
    return True


class ProjectFileError(SystemExit):
    """Stops the build with exit status 2 once the problems are printed (SystemExit: Sphinx
    passes it through untouched, so no crash report is printed)."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(EXIT_STATUS)
        self.problems = problems


def fail(problems: list[Problem]) -> None:
    """Print each problem on one line of stderr and stop with exit status 2 (no-op if none)."""
    if not problems:
        return
    sys.stdout.flush()
    for problem in problems:
        print(problem, file=sys.stderr)
    sys.stderr.flush()
    raise ProjectFileError(problems)
