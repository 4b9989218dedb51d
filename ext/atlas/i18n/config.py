"""The Chinese edition's settings: which translations exist and where each is built."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from atlas.settings import Rule, Settings, frozen_mapping, setting

ENGLISH = "en"


def _folders(value: dict[str, Any]) -> str | None:
    for language, folder in value.items():
        if not isinstance(folder, str) or not folder or "/" in folder or folder.startswith("."):
            return f"{language!r} needs one folder name under the English edition, e.g. 'zh'"
    return None


@dataclass(frozen=True)
class I18nConfig(Settings):
    # Read at html-page-context only (the switch): a change rewrites pages, re-reads none.
    editions: MappingProxyType[str, str] = setting(
        "atlas_i18n_editions",
        default={},
        rebuild="html",
        rule=Rule("dict", meaning=_folders),
        convert=frozen_mapping,
        doc="Translations and the folder each is built into under the English HTML, e.g. "
        '{"zh_CN": "zh"}: every page links to the same page in the other edition.',
    )


def is_translation(config: Any) -> bool:
    """Whether this build is a translated edition (``-D language=zh_CN``), not the source."""
    return (config.language or ENGLISH) != ENGLISH


def locale_dir(app: Any) -> Path:
    """The first of ``locale_dirs`` (read relative to the source folder, as Sphinx does)."""
    return Path(app.srcdir, app.config.locale_dirs[0]) if app.config.locale_dirs else Path()


def translation_language(app: Any) -> str | None:
    """The translation this build reads catalogs of: its own language, or (the English
    edition, for the status and glossary pages) the first configured edition."""
    if is_translation(app.config):
        return str(app.config.language)
    return next(iter(I18nConfig.of(app).editions), None)
