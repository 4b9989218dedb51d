"""The ``changelog`` directive: the book's history by day, newest first, from its git history.

Rendered when the page is read (:mod:`atlas.history.state` re-reads it when HEAD moves), as
plain docutils nodes, so both editions and the PDF get it: a rubric per day, then one item per
kind of change. Pages are ``doc`` cross-references (their titles in the edition's language);
a page that no longer exists is named, not linked. A moved pin links the upstream's compare
view when its registry address is a GitHub one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from atlas.git.repo import GitmodulesError, gitmodules
from atlas.history.events import REVISED_LINES, Day, PinMove
from atlas.history.state import HistoryState, history_state
from atlas.ui import _

SHORT = 7


def _short(sha: str | None) -> str:
    return (sha or "")[:SHORT]


def untranslatable(generated: list[nodes.Node]) -> list[nodes.Node]:
    """Generated text is no gettext unit: it changes with every commit, and its words are
    atlas.ui's (translated already). Without the mark, ``make po`` would put each day's date
    and the intro's commit into the page's catalog, fuzzy again after every commit."""
    for top in generated:
        for node in top.findall(nodes.TextElement):
            node["translatable"] = False
    return generated


class ChangelogDirective(SphinxDirective):
    """``{changelog}``: no arguments, no options, no content."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        state = history_state(self.env)  # read at builder-inited (atlas.history)
        state.changelogs.add(self.env.docname)
        if not state.available:
            note = _(
                "This copy of the book was built outside its git repository, so its "
                "history is not available here ({why})."
            ).format(why=state.why_not or "git")
            return untranslatable([nodes.paragraph(note, note)])
        out: list[nodes.Node] = [self._intro(state)]
        addresses = self._addresses()
        for day in state.days:
            out.extend(self._day(day, addresses))
        return untranslatable(out)

    def _intro(self, state: HistoryState) -> nodes.paragraph:
        first = datetime.fromtimestamp(state.first or 0, UTC).strftime("%Y-%m-%d")
        text = _(
            "Generated from the book's git history at commit {head}: {commits} commits on the "
            "main line since {first}. A page counts as revised on a day when that day's commits "
            "changed at least {lines} of its lines."
        ).format(head=_short(state.head), commits=state.commits, first=first, lines=REVISED_LINES)
        if state.shallow:
            text += " " + _("This clone is shallow: older history is not shown.")
        return nodes.paragraph(text, text)

    def _addresses(self) -> dict[str, str]:
        """Upstream name -> its web address (from .gitmodules), for compare links."""
        found: dict[str, str] = {}
        try:
            entries = gitmodules(Path(history_state(self.env).root)).values()
        except GitmodulesError:  # atlas.upstream reports a broken registry at its line
            return found
        for entry in entries:
            path, url = entry.get("path", ""), entry.get("url", "")
            if path.startswith("upstreams/") and url.startswith("https://github.com/"):
                found[path.removeprefix("upstreams/")] = url.removesuffix(".git")
        return found

    def _day(self, day: Day, addresses: dict[str, str]) -> list[nodes.Node]:
        rubric = nodes.rubric(day.date, day.date, classes=["atlas-changelog-day"])
        items = nodes.bullet_list(classes=["atlas-changelog"])
        for label, docs in (
            (_("New pages"), day.added),
            (_("Substantially revised"), day.revised),
            (_("Translated into Chinese"), day.translated),
        ):
            if docs:
                items += self._pages_item(label, docs)
        if day.pins:
            items += self._item(_("Pins moved"), [self._pin(p, addresses) for p in day.pins])
        return [rubric, items]

    def _item(self, label: str, parts: list[nodes.Node]) -> nodes.list_item:
        para = nodes.paragraph()
        para += nodes.strong(label, label)
        para += nodes.Text(f" ({len(parts)}): ")
        self._join(para, parts)
        return nodes.list_item("", para)

    @staticmethod
    def _join(para: nodes.Element, parts: list[nodes.Node]) -> None:
        for i, part in enumerate(parts):
            if i:
                para += nodes.Text(", ")
            para += part

    def _pages_item(self, label: str, docs: list[str]) -> nodes.list_item:
        """One line per chapter ("Chapter: page, page"), since sixteen pages share the title
        "Problems"; a chapter's own index is "overview". Pages outside a chapter come first."""
        groups: dict[str, list[str]] = {}
        for doc in docs:
            folder = doc.rpartition("/")[0]
            groups.setdefault(folder, []).append(doc)
        para = nodes.paragraph()
        para += nodes.strong(label, label)
        para += nodes.Text(f" ({len(docs)})")
        chapters = nodes.bullet_list()
        for folder in sorted(groups):
            line = nodes.paragraph()
            pages = groups[folder]
            if folder and f"{folder}/index" in self.env.found_docs:
                line += self._page(f"{folder}/index")
                line += nodes.Text(": ")
                parts = [
                    nodes.Text(_("overview")) if d == f"{folder}/index" else self._page(d)
                    for d in pages
                ]
            else:
                parts = [self._page(d) for d in pages]
            self._join(line, parts)
            chapters += nodes.list_item("", line)
        return nodes.list_item("", para, chapters)

    def _page(self, docname: str) -> nodes.Node:
        if docname not in self.env.found_docs:
            return nodes.literal(docname, docname)
        ref = addnodes.pending_xref(
            "",
            refdomain="std",
            reftype="doc",
            reftarget="/" + docname,
            refexplicit=False,
            refwarn=True,
            refdoc=self.env.docname,
        )
        ref += nodes.inline(docname, docname)
        return ref

    def _pin(self, move: PinMove, addresses: dict[str, str]) -> nodes.Node:
        span = nodes.inline()
        span += nodes.literal(move.upstream, move.upstream)
        if move.old is None:
            words = " " + _("added at {new}").format(new=_short(move.new))
        elif move.new is None:
            words = " " + _("removed")
        else:
            words = f" {_short(move.old)} → {_short(move.new)}"
        url = addresses.get(move.upstream)
        if url and move.old and move.new:
            link = f"{url}/compare/{move.old}...{move.new}"
            span += nodes.reference(words, words, refuri=link)
        else:
            span += nodes.Text(words)
        return span
