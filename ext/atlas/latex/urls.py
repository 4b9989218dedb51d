"""No footnote for a URL the reader can already see.

With ``latex_show_urls = "footnote"`` every external link whose text is not its URL gets a
footnote with the URL: right for prose and code captions, whose links would otherwise be lost
on paper. A bibliography entry, though, prints its URL in full and then links its eprint
(``arXiv:2104.04473``) to the same address; a footnote there repeats the URL a second time.

Sphinx's ``ShowUrlsTransform`` (priority 400) skips references whose URI has no scheme, so
:class:`HideVisibleUrls` (just before it) parks the URI of such duplicates in another
attribute, and :class:`RestoreVisibleUrls` (just after) puts it back: the link still works.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

PARKED = "atlas_visible_refuri"


class HideVisibleUrls(SphinxPostTransform):
    formats = ("latex",)
    default_priority = 399

    def run(self, **kwargs: Any) -> None:
        for block in self.document.findall(nodes.TextElement):
            refs = [r for r in block.findall(nodes.reference) if r.get("refuri")]
            shown = {r["refuri"] for r in refs if r.astext() == r["refuri"]}
            for ref in refs:
                if ref["refuri"] in shown and ref.astext() != ref["refuri"]:
                    ref[PARKED] = ref["refuri"]
                    ref["refuri"] = ""


class RestoreVisibleUrls(SphinxPostTransform):
    formats = ("latex",)
    default_priority = 401

    def run(self, **kwargs: Any) -> None:
        for ref in self.document.findall(nodes.reference):
            if PARKED in ref:
                ref["refuri"] = ref.attributes.pop(PARKED)
