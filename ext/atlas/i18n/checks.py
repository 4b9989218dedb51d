"""The translation's checks, each reported at its catalog file and line.

- ``i18n.stale``: a unit of a page marked complete (``complete.toml``) that is fuzzy or
  untranslated, or a page marked complete that has no catalog. ``make check`` fails on it; a
  build that must go out with stale units anyway sets ``STRICT_ALLOW=i18n.stale``.
- ``i18n.glossary``: a translated unit that breaks the glossary (atlas.i18n.glossary).
- ``i18n.block``: a translated mermaid label or ``\\text{}`` phrase (atlas.i18n.blocks) that
  would break its diagram's or formula's syntax (the build keeps its English meanwhile).

Run at ``env-check-consistency`` of a translated build (every build, no-op included, so a
problem never goes quiet), and by ``python -m atlas.i18n check`` without Sphinx.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from atlas.i18n.blocks import kind_of_comment, syntax_problem
from atlas.i18n.catalogs import COMPLETE_FILE, Edition, UnitState, open_edition
from atlas.i18n.config import is_translation, locale_dir
from atlas.i18n.glossary import GLOSSARY_FILE, read_glossary, violations

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Finding:
    subtype: str  # "stale", "glossary" or "block"
    path: Path
    line: int
    message: str

    def location(self) -> str:
        return f"{self.path}:{self.line}"


def stale_findings(edition: Edition) -> list[Finding]:
    found = []
    for page in sorted(edition.complete):
        catalog = edition.catalog(page)
        if catalog is None:
            message = (
                f'page "{page}" is marked complete but has no catalog: run `make po`, '
                f"translate it, or remove it from {COMPLETE_FILE}"
            )
            found.append(Finding("stale", edition.root / COMPLETE_FILE, 1, message))
            continue
        for unit in catalog.units:
            if unit.state == UnitState.TRANSLATED:
                continue
            fuzzy = unit.state == UnitState.FUZZY
            what = "fuzzy (its English changed)" if fuzzy else "untranslated"
            fix = (
                "update the translation and delete the '#, fuzzy' line" if fuzzy else "translate it"
            )
            message = (
                f'a unit of "{page}", which is marked complete, is {what}: {fix}, or remove '
                f"the page from {COMPLETE_FILE}"
            )
            found.append(Finding("stale", catalog.path, unit.line, message))
    return found


def glossary_findings(edition: Edition) -> list[Finding]:
    terms = read_glossary(edition.root / GLOSSARY_FILE)
    if not terms:
        return []
    return [
        Finding("glossary", v.path, v.line, v.message())
        for catalog in edition.catalogs()
        for v in violations(catalog, terms)
    ]


def block_findings(edition: Edition) -> list[Finding]:
    """Translated diagram labels and formula phrases that would break their block."""
    found = []
    for catalog in edition.catalogs():
        for unit in catalog.units:
            kind = kind_of_comment(unit.comments)
            if kind is None or unit.state != UnitState.TRANSLATED:
                continue
            problem = syntax_problem(kind, unit.msgstr)
            if problem is not None:
                message = f"the translation of {unit.msgid!r} is not applied: {problem}"
                found.append(Finding("block", catalog.path, unit.line, message))
    return found


def findings(edition: Edition) -> list[Finding]:
    return stale_findings(edition) + glossary_findings(edition) + block_findings(edition)


def check_translation(app: Sphinx, env: BuildEnvironment) -> None:
    """At env-check-consistency: warn about every finding of a translated build."""
    if not is_translation(app.config):
        return
    try:
        edition = open_edition(locale_dir(app), str(app.config.language))
        found = findings(edition)
    except ValueError as exc:  # complete.toml or glossary.toml unreadable
        logger.warning(str(exc), type="i18n", subtype="config")
        return
    for finding in found:
        logger.warning(
            finding.message, type="i18n", subtype=finding.subtype, location=finding.location()
        )
