"""An index of the code the book cites, for the PDF's index pages.

A printed book is searched through its index. Every upstream citation (a quoted block, or an
inline ``{upstream}`` link) adds an entry ``NAME (upstream code)`` / ``PATH``, so a reader
finds every page that quotes or points at a file. Entries come from what the ``upstream``
directive renders: a caption (or inline) reference of class ``upstream-permalink`` (or
``upstream-ref``) whose text begins ``NAME@SHA`` (the role's title holds that label) and whose
URI is a GitHub permalink ``.../blob/SHA/PATH#L..``. Other references are left alone.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

BLOB_PATH = re.compile(r"/blob/[0-9a-fA-F]{7,40}/([^#?]+)")
NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)@[0-9a-fA-F]{7,40}\b")


def citation_entry(label: str, uri: str) -> str | None:
    """``"megatron (upstream code); megatron/core/x.py"``, or None if this is no citation."""
    name, path = NAME.match(label), BLOB_PATH.search(uri)
    if name is None or path is None:
        return None
    return f"{name.group(1)} (upstream code); {unquote(path.group(1))}"


def _index(entry: str, inline: bool) -> addnodes.index:
    return addnodes.index(entries=[("single", entry, "", False, None)], inline=inline)


class CitedCodeIndex(SphinxPostTransform):
    formats = ("latex",)
    default_priority = 380

    def run(self, **kwargs: Any) -> None:
        for ref in list(self.document.findall(nodes.reference)):
            classes = ref.get("classes", [])
            if "upstream-permalink" in classes:
                entry = citation_entry(ref.astext(), ref.get("refuri", ""))
                block = ref.parent
                while block is not None and not (
                    isinstance(block, nodes.container) and block.get("literal_block")
                ):
                    block = block.parent
                if entry and block is not None and block.parent is not None:
                    block.parent.insert(block.parent.index(block), _index(entry, inline=False))
            elif "upstream-ref" in classes:
                entry = citation_entry(ref.get("reftitle", ""), ref.get("refuri", ""))
                if entry:
                    ref.parent.insert(ref.parent.index(ref) + 1, _index(entry, inline=True))
