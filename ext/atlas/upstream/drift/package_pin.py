"""A package upstream's pin, as a bump moves it: the requirement ``"NAME==VERSION"`` in
``pyproject.toml`` rewritten, and the new version's wheel files for the lock entries the old
lock did not have (:class:`PackagePin`, the :class:`~atlas.upstream.drift.bump.PinMove` of
package upstreams)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from atlas.upstream.drift.model import DriftError, Plan, Record
from atlas.upstream.packages.files import FileSet, PackageError
from atlas.upstream.packages.registry import PYPROJECT, PackageUpstream


def set_pin(book_root: Path, up: PackageUpstream, version: str, write: bool = True) -> None:
    """Rewrite ``"NAME==OLD"`` in pyproject.toml's dependencies to ``"NAME==VERSION"``;
    ``write=False`` only checks that there is exactly one such requirement to rewrite."""
    path = Path(book_root) / PYPROJECT
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(
        r"(?P<q>[\"'])(?P<name>" + re.escape(up.name) + r")\s*===?\s*" + re.escape(up.version)
        + r"(?P<tail>\s*(?:;[^\"']*)?)(?P=q)", re.IGNORECASE,
    )  # fmt: skip
    found = pattern.findall(text)
    if len(found) != 1:
        raise DriftError(
            f'{path}: expected one dependency "{up.name}=={up.version}", found {len(found)}; '
            "edit the pin by hand"
        )
    if write:
        new = pattern.sub(lambda m: f"{m['q']}{m['name']}=={version}{m['tail']}{m['q']}", text)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, path)


class PackagePin:
    """The requirement of the plan's package in ``pyproject.toml``; new files are read from
    the new version's wheel (verified against its RECORD)."""

    def __init__(self, book_root: Path, the_plan: Plan, new_files: FileSet) -> None:
        assert isinstance(the_plan.upstream, PackageUpstream)
        self.book_root, self.plan, self.upstream = Path(book_root), the_plan, the_plan.upstream
        self.new_files = new_files

    def check(self) -> None:
        set_pin(self.book_root, self.upstream, self.plan.new, write=False)

    def new_file(self, record: Record) -> bytes | None:
        if record.new_path is None:
            return None
        try:
            return self.new_files.read(record.new_path)[1]
        except PackageError:
            return None

    def move(self) -> None:
        set_pin(self.book_root, self.upstream, self.plan.new)
