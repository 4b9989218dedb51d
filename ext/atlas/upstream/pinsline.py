"""Under each HTML page that cites upstream code: the pins its citations were read and verified
at ("Citations verified at: nano-vllm 1a2b3c4, torch 2.13.0"), from what the build recorded
while reading the page (:class:`atlas.upstream.state.UpstreamState`'s ``pins``). A reader who
compares the page with the code today knows which commit the page describes; the back matter's
freshness table says how far each pin is behind.
"""

from __future__ import annotations

from html import escape

from docutils import nodes
from sphinx.application import Sphinx

from atlas.ui import _
from atlas.upstream.state import upstream_state

SHA_LENGTH = 40


def _shown(pin: str | None) -> str:
    if pin is None:
        return "?"
    return pin[:7] if len(pin) == SHA_LENGTH and all(c in "0123456789abcdef" for c in pin) else pin


def page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: nodes.document | None
) -> None:
    """At ``html-page-context``: append the page's pins to its body, names in order."""
    pins = upstream_state(app.env).pins.get(pagename)
    if doctree is None or "body" not in context or not pins:
        return
    listed = ", ".join(
        f"<code>{escape(name)}</code> {escape(_shown(pin))}" for name, pin in sorted(pins.items())
    )
    words = escape(_("Citations verified at:"))
    context["body"] += f'<p class="atlas-page-fact atlas-pins">{words} {listed}</p>\n'
