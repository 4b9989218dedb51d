"""What each feature hands to atlas.project at setup: its settings and its checks of the
project files it owns (sphinx-design's ``setup_<feature>``; jupyter-cache's core, which knows no
client). So atlas.project imports no feature, and a new feature is one ``setup`` that calls
:func:`add_settings` and :func:`add_check` (and :func:`add_page_outputs` for files it writes
per page), not an edit here.

The registry lives on the Sphinx app (each app its own, as tests build many in one process).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from atlas.project.errors import Problem
from atlas.settings import Rule, Settings

ATTRIBUTE = "_atlas_project_registry"
# A check of project files: (the Sphinx app) -> its problems, each one clean error.
Check = Callable[[Any], list[Problem]]
# A page's own outputs beside its HTML: (docname) -> paths relative to the output folder.
PageOutputs = Callable[[str], list[str]]
WHEN = ("config-inited", "builder-inited")


@dataclass
class Registry:
    settings: list[type[Settings]] = field(default_factory=list)
    # (order, check) per event; the order keeps the errors of several files in one sequence
    checks: dict[str, list[tuple[int, Check]]] = field(
        default_factory=lambda: {when: [] for when in WHEN}
    )
    page_outputs: list[PageOutputs] = field(default_factory=list)

    def rules(self) -> dict[str, Rule]:
        return {name: rule for cls in self.settings for name, rule in cls.rules().items()}


def registry(app: Any) -> Registry:
    found = getattr(app, ATTRIBUTE, None)
    if found is None:
        found = Registry()
        setattr(app, ATTRIBUTE, found)
    return found


def add_settings(app: Any, cls: type[Settings]) -> None:
    """In a feature's ``setup()``: register its settings dataclass with Sphinx, and with
    atlas.project, which checks every value by its rule before anything reads it."""
    cls.register(app)
    registry(app).settings.append(cls)


def add_check(app: Any, check: Check, *, order: int, when: str = "config-inited") -> None:
    """In a feature's ``setup()``: a check of a project file the feature owns, run before
    anything reads it (``config-inited``), or once the builder is known (``builder-inited``,
    HTML builders only: the files it copies). All problems of one event stop the build as one
    list, in ``order``."""
    registry(app).checks[when].append((order, check))


def add_page_outputs(app: Any, outputs: PageOutputs) -> None:
    """In a feature's ``setup()``: the files it writes for a page beside the page's HTML (teach:
    the runnable ``_labs/PAGE.py``), so that atlas.project removes them with a removed page
    without knowing the feature."""
    registry(app).page_outputs.append(outputs)


def page_outputs(app: Any, docname: str) -> list[str]:
    """Every registered feature's outputs of page ``docname``, relative to the output folder."""
    return [path for outputs in registry(app).page_outputs for path in outputs(docname)]


def run_checks(app: Any, when: str) -> list[Problem]:
    problems: list[Problem] = []
    for _, check in sorted(registry(app).checks[when], key=lambda pair: pair[0]):
        problems += check(app)
    return problems
