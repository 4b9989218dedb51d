"""Translated nodes belong to the page they were moved into, not to the message's document.

Sphinx's ``Locale`` transform parses each translated message into a document of its own
(``sphinx.transforms.i18n._publish_msgstr``) and moves the resulting nodes into the page. Each
of those nodes still names that temporary document as its ``document``: docutils'
``Element.setup_child`` set it while the message was parsed, and moving a node does not reset
it. Pickling the page then pickles every message's document with it, settings and all: the
Chinese doctrees were 389 MB against the English edition's 22 MB, and the Chinese build spent
most of its extra time pickling them and reading them back (Sphinx's figure numbering loads
every doctree of the book). :func:`adopt_translated_nodes` points every node at its page's own
document once the page's transforms have run, before Sphinx pickles it.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx

from atlas.i18n.config import is_translation


def adopt(doctree: nodes.document) -> int:
    """Re-point each node whose ``document`` is another document at ``doctree``; the count."""
    moved = 0
    for node in doctree.findall():
        owner = getattr(node, "_document", None)
        if owner is not None and owner is not doctree:
            node.document = doctree
            moved += 1
    return moved


def adopt_translated_nodes(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``, in a translation's build only (no English node has another owner)."""
    if is_translation(app.config):
        adopt(doctree)
