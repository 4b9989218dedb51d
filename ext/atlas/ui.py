"""The words of the book's own interface (lab boxes, the labs table, the problem index, the PDF's
answers), translated with gettext like Sphinx's own.

Why gettext and not a dict per language: it is how Sphinx and its themes translate their words,
so one mechanism serves ours and the theme's (furo's "Back to top" and "On this page" have no
Chinese in Sphinx's catalog), and Babel, already a dependency, extracts and checks them.

- ``_("...")`` translates a literal now (at read or write time, once the catalogs are loaded);
- ``N_("...")`` only marks a literal for extraction (tables of words translated later with ``_``).

The catalogs are ``ext/atlas/i18n/locale/<language>/LC_MESSAGES/``: ``atlas.po`` (our words)
and ``sphinx.po`` (the theme's words missing from Sphinx's catalog); atlas.i18n compiles and
loads them (:func:`atlas.i18n.ui_catalogs.load`). A build in English translates nothing.
"""

from __future__ import annotations

from sphinx.locale import get_translation

CATALOG = "atlas"

_translate = get_translation(CATALOG)


def _(message: str) -> str:
    """``message`` in the language of the build; in English (no catalog loaded), itself.

    Always a ``str``: Sphinx's lazy proxy, which it returns while no catalog is loaded, breaks
    ``str.join`` and docutils' text nodes."""
    return str(_translate(message))


def N_(message: str) -> str:  # noqa: N802 - gettext's own name for "mark, do not translate"
    """Mark ``message`` for extraction; translate it later with ``_``."""
    return message


__all__ = ["CATALOG", "N_", "_"]
