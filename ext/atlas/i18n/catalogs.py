"""The Chinese edition's catalogs as data: where they are, and what state each unit is in.

Read with Babel (what sphinx-intl and Sphinx themselves use), never parsed by hand. The
status page, ``make i18n-status``, the stale-unit marking, the completeness check and the
glossary check all count units through :func:`read_catalog`, so they cannot disagree.

Layout (the sphinx-intl convention, ``gettext_compact = False``)::

    locales/zh_CN/LC_MESSAGES/<page>.po   one catalog per page
    locales/zh_CN/complete.toml           pages marked complete (``complete = ["index", ...]``)
    locales/zh_CN/glossary.toml           the glossary (atlas.i18n.glossary)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

from babel.messages.pofile import read_po

COMPLETE_FILE = "complete.toml"


class UnitState(StrEnum):
    TRANSLATED = "translated"
    FUZZY = "fuzzy"  # translated once, but its English changed since: shown in English
    UNTRANSLATED = "untranslated"


@dataclass(frozen=True)
class Unit:
    """One message of a catalog: its English, its translation, its state and its .po line."""

    msgid: str
    msgstr: str
    state: UnitState
    line: int  # of the msgid in the .po file (1-based)
    comments: tuple[str, ...] = ()  # its "#." lines (a diagram's or formula's unit says so)


@dataclass(frozen=True)
class Catalog:
    page: str  # docname, e.g. "hpc/index"
    path: Path
    units: tuple[Unit, ...]

    def count(self, state: UnitState) -> int:
        return sum(1 for unit in self.units if unit.state == state)

    def state_of(self, msgid: str) -> UnitState:
        """A message's state; one the catalog lacks (added since ``make po``) is untranslated."""
        return next((u.state for u in self.units if u.msgid == msgid), UnitState.UNTRANSLATED)


@dataclass(frozen=True)
class Edition:
    """One translation's folder: ``<locale_dir>/<language>``."""

    root: Path  # locales/zh_CN
    language: str
    complete: frozenset[str] = field(default_factory=frozenset)

    @property
    def messages(self) -> Path:
        return self.root / "LC_MESSAGES"

    def catalog_path(self, page: str) -> Path:
        return self.messages / f"{page}.po"

    def catalogs(self) -> list[Catalog]:
        """Every page's catalog, in page order."""
        found = sorted(self.messages.rglob("*.po")) if self.messages.is_dir() else []
        return [read_catalog(path, self.page_of(path)) for path in found]

    def page_of(self, path: Path) -> str:
        return path.relative_to(self.messages).with_suffix("").as_posix()

    def catalog(self, page: str) -> Catalog | None:
        path = self.catalog_path(page)
        return read_catalog(path, page) if path.is_file() else None


class EditionFileError(ValueError):
    """complete.toml cannot be read; the message names the file, the line and the fix."""


def open_edition(locale_dir: Path, language: str) -> Edition:
    """The edition of ``language`` under ``locale_dir``, with its pages marked complete."""
    root = locale_dir / language
    path = root / COMPLETE_FILE
    complete: frozenset[str] = frozenset()
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise EditionFileError(f"{path}: {exc}. Fix the TOML syntax.") from None
        pages = data.get("complete", [])
        if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
            raise EditionFileError(
                f'{path}: "complete" must be a list of page names, e.g. complete = ["index"].'
            )
        complete = frozenset(pages)
    return Edition(root=root, language=language, complete=complete)


def _state(msgstr: str, fuzzy: bool) -> UnitState:
    if not msgstr.strip():
        return UnitState.UNTRANSLATED
    return UnitState.FUZZY if fuzzy else UnitState.TRANSLATED


@lru_cache(maxsize=512)
def _read(path: Path, mtime_ns: int, size: int) -> tuple[Unit, ...]:
    with path.open("rb") as handle:
        catalog = read_po(handle)
    units = []
    for message in catalog:
        if not message.id:  # the header
            continue
        msgstr = message.string if isinstance(message.string, str) else "".join(message.string)
        # Babel gives the line of the message's first line (its comments excluded): the msgid
        state, comments = _state(msgstr, message.fuzzy), tuple(message.auto_comments)
        units.append(Unit(message.id, msgstr, state, message.lineno, comments))
    return tuple(units)


def read_catalog(path: Path, page: str) -> Catalog:
    """A page's catalog (cached on the file's mtime and size: a build reads each once)."""
    stat = path.stat()
    return Catalog(page=page, path=path, units=_read(path, stat.st_mtime_ns, stat.st_size))
