"""What a page that no longer exists leaves behind: links to it, and its outputs.

Sphinx resolves a ``{doc}`` link (or a MyST link to a page) when it writes the page holding
it, and an incremental build writes only the pages it re-read. Renaming a page therefore left
every unchanged page that linked to it with a dead link and no message, and the old page's
HTML and runnable ``_labs`` file stayed in the build folder, still served. Here:

- :class:`DocLinksCollector` remembers, per page, the pages it links to (and the line);
- :func:`outdated_linkers` (``env-get-outdated``) re-reads the pages that link to a page added
  or removed in this build, so their HTML is written again with the link as it now resolves;
- :func:`check_links` (``env-check-consistency``) reports every ``{doc}`` link of the book to
  a page that does not exist, at its page and line, with the page it probably means; Sphinx's
  own "unknown document" for the same link is dropped (:func:`already_reported`), so each is one
  error. A Markdown link (``[text](page.md)``) is MyST's to report, when its re-read page is
  written. When no page is read, the warning ledger repeats both (:mod:`atlas.project.ledger`);
- :func:`remove_outputs` (``build-finished``) deletes the HTML and ``_labs`` file of each page
  removed since the book was last read (by any builder of the build folder).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.domains import Domain
from sphinx.environment import BuildEnvironment
from sphinx.util import docname_join, logging

from atlas.project.envstate import PageState, StateCollector, state_of

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DocLink:
    target: str  # the absolute docname linked to
    line: int
    written: str  # the target as the page wrote it (for the message)
    myst: bool = False  # a Markdown link: MyST reports it missing when the page is written


@dataclass
class DocLinksState(PageState):
    links: dict[str, list[DocLink]] = field(default_factory=dict)  # docname -> its page links
    # Pages ever removed (book-wide, a frozenset: not forgotten when Sphinx clears the removed
    # page): kept with the environment, which the builders of one build folder share, so that
    # an HTML build after another builder's build still cleans up. A page added again exists,
    # and its outputs are kept.
    removed: frozenset[str] = frozenset()


def link_target(node: pending_xref, docname: str) -> str | None:
    """The docname a page link points at, or None for a reference that is not a page link."""
    target = node.get("reftarget", "")
    if node.get("reftype") == "doc" and node.get("refdomain") in ("std", "", None):
        return docname_join(node.get("refdoc", docname), target)
    if node.get("refdomain") == "doc" and node.get("reftype") == "myst":
        return target  # MyST gives the docname itself
    return None


def _line(node: nodes.Node) -> int:
    current: nodes.Node | None = node
    while current is not None:
        if getattr(current, "line", None):
            return int(current.line)  # type: ignore[attr-defined]
        current = current.parent
    return 0


class DocLinksCollector(StateCollector):
    state = DocLinksState

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        docname = app.env.docname
        found = []
        for node in doctree.findall(pending_xref):
            target = link_target(node, docname)
            if target is not None:
                myst = node.get("refdomain") == "doc"
                found.append(DocLink(target, _line(node), node.get("reftarget", ""), myst))
        if found:
            state_of(app.env, DocLinksState).links[docname] = found


def outdated_linkers(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Pages that link to a page added or removed now: their links resolve differently."""
    state = state_of(env, DocLinksState)
    if removed - state.removed:
        state.removed = state.removed | removed
    moved = added | removed
    if not moved:
        return []
    links = state.links
    return sorted(
        docname
        for docname, found in links.items()
        if docname not in removed and docname not in changed and docname in env.found_docs
        if any(link.target in moved for link in found)
    )


def _hint(target: str, docs: set[str]) -> str:
    """The fix, with the page probably meant: one of the same file name (a page moved to
    another folder), else the closest name."""
    base = target.rsplit("/", 1)[-1]
    near = sorted(d for d in docs if d.rsplit("/", 1)[-1] == base)[:1]
    near = near or difflib.get_close_matches(target, sorted(docs), n=1, cutoff=0.6)
    if near:
        return f"point it at the page's current name ({near[0]!r}?) or remove it"
    return "point it at an existing page or remove it"


def check_links(app: Sphinx, env: BuildEnvironment) -> None:
    """env-check-consistency: every page link of the book to a page that does not exist."""
    docs = set(env.all_docs)
    links = state_of(env, DocLinksState).links
    for docname in sorted(links):
        if docname not in docs:
            continue
        for link in links[docname]:
            if link.target in docs or link.myst:
                continue  # MyST's own warning names a Markdown link when its page is written
            named = repr(link.written)
            if link.written.lstrip("/") != link.target:
                named += f" ({link.target})"
            logger.error(
                f"link to page {named}, which does not exist (renamed or removed?): "
                f"{_hint(link.target, docs)}",
                location=(docname, link.line or None),
                type="atlas",
                subtype="links.doc",
            )


def already_reported(app: Sphinx, domain: Domain, node: pending_xref) -> bool | None:
    """warn-missing-reference: :func:`check_links` reported this page link; say it once."""
    env = app.env
    if node.get("refdomain") == "doc":
        return None  # a Markdown link: MyST words its own warning
    target = link_target(node, node.get("refdoc", env.docname if env else ""))
    if env is not None and target is not None and target not in env.all_docs:
        return True
    return None


def remove_outputs(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: the HTML and the runnable file of every page removed since the book was
    last read, by this builder or another sharing the environment."""
    if exception is not None or app.builder.format != "html" or app.env is None:
        return
    removed = state_of(app.env, DocLinksState).removed
    from atlas.teach.runnable import file_name

    outdir = Path(app.outdir)
    outfile = getattr(app.builder, "get_outfilename", None)
    for docname in sorted(removed):
        if docname in app.env.all_docs or outfile is None:
            continue
        for path in (Path(outfile(docname)), outdir / file_name(docname)):
            if path.is_file() and path.resolve().is_relative_to(outdir.resolve()):
                path.unlink()
                logger.info(f"removed {path.relative_to(outdir)}: its page {docname} is gone")
