"""An index of the code the book cites, for the PDF's index pages.

A printed book is searched through its index. Every upstream citation at a commit (a quoted
block, or an inline ``{upstream}`` link) adds an entry ``NAME (upstream code)`` / ``PATH``, so
a reader finds every page that quotes or points at a file. Entries come from the structured
attributes the ``upstream`` directive and role put on the citation's link
(:func:`atlas.upstream.directive.citation_attributes`), never from its rendered caption or URL:
rewording the caption cannot empty the index. Other references are left alone.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from atlas.upstream.directive import CITED_COMMIT, CITED_PATH, CITED_UPSTREAM


def citation_entry(ref: nodes.Element) -> str | None:
    """``"megatron (upstream code); megatron/core/x.py"``, or None if ``ref`` is no citation
    at a commit."""
    name, path = ref.get(CITED_UPSTREAM), ref.get(CITED_PATH)
    if not (name and path and ref.get(CITED_COMMIT)):
        return None
    return f"{name} (upstream code); {path}"


def _index(entry: str, inline: bool) -> addnodes.index:
    return addnodes.index(entries=[("single", entry, "", False, None)], inline=inline)


def _code_block(ref: nodes.Element) -> nodes.Element | None:
    """The literal-block container whose caption holds ``ref``."""
    block = ref.parent
    while block is not None and not (
        isinstance(block, nodes.container) and block.get("literal_block")
    ):
        block = block.parent
    return block


class CitedCodeIndex(SphinxPostTransform):
    formats = ("latex",)
    default_priority = 380

    def run(self, **kwargs: Any) -> None:
        for ref in list(self.document.findall(nodes.reference)):
            entry = citation_entry(ref)
            if entry is None:
                continue
            classes = ref.get("classes", [])
            if "upstream-permalink" in classes:  # a quoted block's caption: before the block
                block = _code_block(ref)
                if block is not None and block.parent is not None:
                    block.parent.insert(block.parent.index(block), _index(entry, inline=False))
            elif "upstream-ref" in classes:  # an inline link: right after it
                ref.parent.insert(ref.parent.index(ref) + 1, _index(entry, inline=True))
