"""Every ``cite:KEY`` source of the labkit registries names an entry of the bibliography.

The hardware and model registries (``labkit/registry/``) back each figure with a source; a
report is named by its bibliography key, ``cite:KEY``. Pages never cite those keys themselves
(a lab prints the figure), so the page checks of :mod:`atlas.refs.checks` never see them: a
misspelt key would publish a figure whose source cannot be found.

The registry files are read as text, not imported: Sphinx never imports labkit (labs do, in
their workers), and the text gives the line to fix. ``tests/test_build_checks_registry.py``
also walks the imported registries, so a key built by code rather than written out is checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# A registry source, in a string or a comment: "cite:KEY", then the end or a space and detail.
CITE = re.compile(r"(?<![\w:])cite:(?P<key>[A-Za-z0-9][\w-]*)")
PLACEHOLDER = re.compile(r"^[A-Z]+$")  # ``cite:KEY`` in a docstring explains the form


@dataclass(frozen=True)
class RegistryCite:
    """One ``cite:KEY`` in a registry file, where it is written."""

    path: Path
    line: int
    key: str


def registry_cites(registry: Path) -> list[RegistryCite]:
    """Every ``cite:KEY`` written in the ``*.py`` files of ``registry`` and its packages (the
    model figures live in ``registry/models/<family>.py``), in file and line order."""
    found: list[RegistryCite] = []
    for path in sorted(registry.rglob("*.py")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            found.extend(
                RegistryCite(path, number, m["key"])
                for m in CITE.finditer(text)
                if not PLACEHOLDER.match(m["key"])
            )
    return found


def unknown_cites(registry: Path, keys: set[str]) -> list[RegistryCite]:
    """The registry sources whose key is not in ``keys`` (the bibliography's)."""
    return [cite for cite in registry_cites(registry) if cite.key not in keys]


def near_keys(key: str, keys: set[str]) -> list[str]:
    """Up to three keys of the bibliography that share the first four letters (a typo's fix)."""
    return sorted(k for k in keys if k[:4] == key[:4])[:3]
