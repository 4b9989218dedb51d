"""What is a unit of a page's catalog: prose, titles, captions, admonitions, lab titles.

Sphinx already leaves literal blocks (code, upstream citations, lab transcripts), doctest
blocks and raw HTML out (``gettext_additional_targets = []``). It would still take display math
as a unit, and a formula is the same in both editions: copying it into a catalog would only let
the two drift apart. :class:`SharedBlocks` marks such nodes untranslatable before Sphinx's
``Locale`` transform (priority 20) reads the page, for the gettext builder and the Chinese
edition alike.

In the Chinese edition, :class:`StaleUnits` then finds the units shown in English (fuzzy or
untranslated), marks them and puts a banner at the top of the page.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util.nodes import extract_messages

from atlas.i18n.catalogs import Catalog, Edition, UnitState, read_catalog
from atlas.i18n.config import is_translation, locale_dir

# Nodes that both editions share as they are (never copied into a catalog).
SHARED = (nodes.math_block,)


class SharedBlocks(SphinxTransform):
    """Mark display math (and any :data:`SHARED` node) ``translatable = False``."""

    default_priority = 10  # before Locale (20), which translates, and before versioning

    def apply(self, **kwargs: object) -> None:
        for node in self.document.findall(lambda n: isinstance(n, SHARED)):
            node["translatable"] = False


# The banner of a page that shows some units in English (fuzzy or untranslated), per language.
BANNERS = {"zh_CN": "本页有 {n} 段译文待更新，暂以英文原文显示"}
BANNER_FALLBACK = "{n} passages of this page await translation and are shown in English."
STALE = "atlas-i18n-stale"  # class of a unit shown in English, beside atlas-i18n-<state>
BANNER = "atlas-i18n-banner"


def stale_units(
    document: nodes.document, catalog: Catalog | None
) -> list[tuple[nodes.Element, UnitState]]:
    """The units that Sphinx's ``Locale`` left in English, with their state in the catalog.

    Sphinx compiles catalogs without fuzzy messages (``gettext_allow_fuzzy_translations`` is
    off), so a fuzzy unit is never shown in its outdated translation: it stays English, like an
    untranslated one. A node whose translation did not apply (it did not parse as one paragraph)
    is stale too, whatever the catalog says.
    """
    found: list[tuple[nodes.Element, UnitState]] = []
    for node, msg in extract_messages(document):
        state = catalog.state_of(msg) if catalog else UnitState.UNTRANSLATED
        if isinstance(node, addnodes.translatable):  # toctree captions: Locale marks nothing
            if state != UnitState.TRANSLATED:
                found.append((node, state))
        elif not node.get("translated"):
            found.append((node, UnitState.UNTRANSLATED if state == UnitState.TRANSLATED else state))
    return found


def banner(language: str, count: int) -> nodes.container:
    text = BANNERS.get(language, BANNER_FALLBACK).format(n=count)
    # no-search: Sphinx's index and the search snippets leave the banner out (it is no text of
    # the page's, and every stale page would match its words)
    box = nodes.container(classes=[BANNER, "no-search"])
    box += nodes.paragraph(text, text)
    return box


class StaleUnits(SphinxTransform):
    """In a translated edition: mark each unit shown in English, and say how many at the top.

    Runs right after ``Locale`` (priority 20); the English edition is left untouched.
    """

    default_priority = 21

    def apply(self, **kwargs: object) -> None:
        if not is_translation(self.config):
            return
        language = str(self.config.language)
        edition = Edition(locale_dir(self.app) / language, language)
        docname = self.env.current_document.docname
        path = edition.catalog_path(docname)
        catalog = read_catalog(path, docname) if path.is_file() else None
        if catalog is not None:
            self.env.note_dependency(str(path))  # the .mo is noted by Sphinx; the .po is ours
        found = stale_units(self.document, catalog)
        for node, state in found:
            if not isinstance(node, addnodes.translatable):
                node["classes"] += [STALE, f"atlas-i18n-{state}"]
        if found:
            section = next(iter(self.document.findall(nodes.section)), None)
            parent = section if section is not None else self.document
            at = 1 if section is not None and section.children else 0
            parent.insert(at, banner(language, len(found)))
