"""Words that labkit code writes into a page (a computed table's cells), kept translatable.

labkit never imports Sphinx (its code runs at home too, from a notebook), so it cannot call
:func:`atlas.ui._`. A function that returns words for a page returns a :class:`Phrase`: its
template is marked with :func:`N_` (Babel extracts it into ``atlas.po`` with the interface's
words) and its values are data (model names, sizes), filled in after the template is
translated. ``computed-table`` (:mod:`atlas.teach.tables`) translates the template in the
edition's language; anywhere else ``str(phrase)`` is the English.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

ROLE = "support"  # the words of computed tables, not a mechanism a page teaches


def N_(message: str) -> str:  # noqa: N802 - gettext's name for "mark, do not translate"
    """Mark ``message`` for extraction into ``atlas.po``; it is translated where it is shown."""
    return message


@dataclass(frozen=True)
class Phrase:
    """A template of words with ``{name}`` placeholders, and the data that fills them."""

    template: str
    values: tuple[tuple[str, object], ...] = ()

    def text(self, translate: Callable[[str], str] = str) -> str:
        """The phrase with its template translated by ``translate`` (the English by default)."""
        return translate(self.template).format(**dict(self.values))

    def __str__(self) -> str:
        return self.text()

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def phrase(template: str, **values: object) -> Phrase:
    """``phrase(N_("dense {width}"), width=11008)``: words around data."""
    return Phrase(template, tuple(values.items()))


__all__ = ["N_", "Phrase", "phrase"]
