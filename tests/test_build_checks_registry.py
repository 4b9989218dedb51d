"""Every registry figure's ``cite:KEY`` source is an entry of the bibliography (issue 35)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from atlas.labkit.registry import hardware, models
from atlas.refs.bib import load
from atlas.refs.registry_cites import registry_cites


@pytest.mark.sphinx("html", testroot="refs-registry")
def test_an_unknown_registry_key_is_an_error_at_its_file_and_line(app, warning) -> None:
    app.build()
    text = warning.getvalue()
    assert re.search(
        r"registry[/\\]hardware\.py:5: ERROR: registry source 'cite:vendor2024datashet' is not "
        r"in .*refs\.bib \(near: vendor2024datasheet\): fix the key",
        text,
    ), text
    assert "cite:vendor2024datasheet'" not in text  # the correct key is not reported
    assert "Traceback" not in text
    assert (Path(app.outdir) / "index.html").exists()  # the build went on
    assert app.statuscode == 1


def _strings(value: Any, seen: set[int]) -> list[str]:
    """Every string reachable from ``value`` through dataclasses, mappings and sequences."""
    if isinstance(value, str):
        return [value]
    if id(value) in seen:
        return []
    seen.add(id(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        children: Any = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif isinstance(value, dict):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        children = list(value)
    else:
        return []
    return [s for child in children for s in _strings(child, seen)]


def _cited_keys(module: ModuleType) -> set[str]:
    seen: set[int] = set()
    found = [s for value in vars(module).values() for s in _strings(value, seen)]
    return {s.split()[0].removeprefix("cite:") for s in found if s.startswith("cite:")}


def test_every_source_of_the_real_registries_is_in_the_bibliography(repo_root: Path) -> None:
    keys = set(load(repo_root / "source" / "references.bib").entries)
    cited = _cited_keys(hardware) | _cited_keys(models)
    assert len(cited) >= 20  # the walk reaches the registries' sources
    assert sorted(cited - keys) == []
    # the build reads the files' text: it sees every key the imported registries hold
    written = {c.key for c in registry_cites(repo_root / "ext" / "atlas" / "labkit" / "registry")}
    assert cited <= written
