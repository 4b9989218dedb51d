"""What is a unit of a page's catalog: prose, titles, captions, admonitions, lab titles.

Sphinx already leaves literal blocks (code, upstream citations, lab transcripts), doctest
blocks and raw HTML out (``gettext_additional_targets = []``). It would still take display math
as a unit, and a formula is the same in both editions: copying it into a catalog would only let
the two drift apart. :class:`SharedBlocks` marks such nodes untranslatable before Sphinx's
``Locale`` transform (priority 20) reads the page, for the gettext builder and the Chinese
edition alike.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.transforms import SphinxTransform

# Nodes that both editions share as they are (never copied into a catalog).
SHARED = (nodes.math_block,)


class SharedBlocks(SphinxTransform):
    """Mark display math (and any :data:`SHARED` node) ``translatable = False``."""

    default_priority = 10  # before Locale (20), which translates, and before versioning

    def apply(self, **kwargs: object) -> None:
        for node in self.document.findall(lambda n: isinstance(n, SHARED)):
            node["translatable"] = False
