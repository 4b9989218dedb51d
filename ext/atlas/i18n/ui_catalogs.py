"""Compile and load the interface catalogs of :mod:`atlas.ui` (``atlas.po``, ``sphinx.po``).

Sphinx compiles the ``sphinx.po`` of a book's ``locale_dirs`` before ``config-inited`` and never
compiles an extension's catalog; this module compiles both catalogs that live with the extension
(with Babel, as Sphinx does), only when a ``.po`` is newer than its ``.mo`` (git-ignored), and
atomically, since parallel test builds may compile at once. ``sphinx.po`` is added as a fallback
of Sphinx's translator: it supplies the theme's words Sphinx lacks and overrides none of Sphinx's.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from sphinx import locale
from sphinx.application import Sphinx
from sphinx.config import Config

from atlas.ui import CATALOG

LOCALE_DIR = Path(__file__).resolve().parent / "locale"
DOMAINS = (CATALOG, "sphinx")


def catalog_path(language: str, domain: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{domain}.po"


def compile_catalog(po: Path) -> None:
    """Write ``po``'s ``.mo`` beside it when it is missing or older than the ``.po``."""
    mo = po.with_suffix(".mo")
    if mo.is_file() and mo.stat().st_mtime_ns >= po.stat().st_mtime_ns:
        return
    with po.open("rb") as source:
        catalog = read_po(source)
    handle, temporary = tempfile.mkstemp(dir=po.parent, suffix=".mo.tmp")
    try:
        with os.fdopen(handle, "wb") as target:
            write_mo(target, catalog)
        os.replace(temporary, mo)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def load(app: Sphinx, config: Config) -> None:
    """At ``config-inited``: compile what changed and register the language's catalogs.

    Our catalog's translator is set afresh each build: several builds in one process (the
    tests) must not leave one edition's words to the next (a build in English has none)."""
    locale.translators.pop(("general", CATALOG), None)
    language = str(config.language or "en")
    if not (LOCALE_DIR / language).is_dir():
        return  # English, or a language without interface catalogs: the words stay English
    for domain in DOMAINS:
        path = catalog_path(language, domain)
        if path.is_file():
            compile_catalog(path)
            app.add_message_catalog(domain, str(LOCALE_DIR))
