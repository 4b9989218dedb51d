"""Each feature package's docstring maps every module of the package (a newcomer reads the
docstring to find where a job lives; a module it does not name is a module nobody finds).

A module counts as named when the docstring writes it as ``name`` or :mod:`atlas.PKG.name`."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ATLAS = Path(__file__).resolve().parents[1] / "ext" / "atlas"
PACKAGES = ["refs", "labs", "teach", "latex"]


def unnamed_modules(package: str) -> list[str]:
    doc = importlib.import_module(f"atlas.{package}").__doc__ or ""
    names = sorted(
        path.stem
        for path in (ATLAS / package).glob("*.py")
        if path.stem != "__init__" and path.is_file()
    )
    named = set(re.findall(r"``(\w+)``", doc))
    named |= set(re.findall(rf":mod:`~?atlas\.{package}\.(\w+)`", doc))
    return [name for name in names if name not in named]


@pytest.mark.parametrize("package", PACKAGES)
def test_the_package_docstring_names_every_module(package: str) -> None:
    assert unnamed_modules(package) == []
