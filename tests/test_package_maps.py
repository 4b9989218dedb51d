"""Each package's docstring maps every module and sub-package of the package (a newcomer
reads the docstring to find where a job lives; a module it does not name is a module nobody
finds).

A module counts as named when the docstring writes it as ``name`` or :mod:`atlas.PKG.name`."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ATLAS = Path(__file__).resolve().parents[1] / "ext" / "atlas"
PACKAGES = [
    "git",
    "project",
    "assets",
    "upstream",
    "upstream.drift",
    "upstream.fetch",
    "upstream.packages",
    "code",
    "code.symbols",
    "labs",
    "refs",
    "latex",
    "teach",
]


def unnamed_modules(package: str) -> list[str]:
    doc = importlib.import_module(f"atlas.{package}").__doc__ or ""
    names = sorted(
        path.stem
        for path in (ATLAS / package.replace(".", "/")).glob("*.py")
        if path.stem not in ("__init__", "__main__") and path.is_file()
    )
    names += sorted(  # sub-packages are named like modules (``drift/`` or ``drift``)
        path.parent.name for path in (ATLAS / package.replace(".", "/")).glob("*/__init__.py")
    )
    named = set(re.findall(r"``(\w+)/?``", doc))
    named |= set(re.findall(rf":mod:`~?atlas\.{re.escape(package)}\.(\w+)`", doc))
    named |= set(re.findall(r":mod:`\.(\w+)`", doc))  # relative, as in drift's map
    return [name for name in names if name not in named]


@pytest.mark.parametrize("package", PACKAGES)
def test_the_package_docstring_names_every_module(package: str) -> None:
    assert unnamed_modules(package) == []
