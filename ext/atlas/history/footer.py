"""Each page's last change, under its body in HTML: "Last changed on 2026-12-02 (commit
abc1234)". In the Chinese edition the date covers the page's catalog too, so a translation
made after the English shows its own date. A page no commit has touched yet shows nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape

from docutils import nodes
from sphinx.application import Sphinx

from atlas.history.state import last_change
from atlas.ui import _


def page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: nodes.document | None
) -> None:
    """At ``html-page-context``: append the page's last change to its body."""
    if doctree is None or "body" not in context or pagename not in app.env.found_docs:
        return
    change = last_change(app, pagename)
    if change is None:
        return
    date = datetime.fromtimestamp(change.time, UTC).strftime("%Y-%m-%d")
    words = _("Last changed on {date} (commit {commit}).").format(date=date, commit=change.sha[:7])
    context["body"] += f'<p class="atlas-page-fact atlas-last-changed">{escape(words)}</p>\n'
