"""Build-time checks of the bibliography and of the pages that cite it.

Errors (never silent warnings), each at a page or a .bib line, with the fix:
a cited key missing from the bibliography (in a page, or as a ``cite:KEY`` source of the labkit
registries), an entry without url, a malformed arXiv identifier
(in an entry, or in an arxiv.org link in a page), and a raw link in a page to a paper the
bibliography holds (cite it instead, so the book has one place to fix a moved URL).
"""

from __future__ import annotations

import logging as logging_std
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.util import logging

from atlas.refs import arxiv
from atlas.refs.bib import Bibliography, load

logger = logging.getLogger(__name__)
_LOADED: dict[tuple[str, float], Bibliography] = {}


def bibliographies(app: Sphinx) -> list[Bibliography]:
    """The configured .bib files, parsed once per file version (shared by forked readers)."""
    found = []
    for name in app.config.bibtex_bibfiles:
        path = Path(app.confdir, name)
        try:
            key = (str(path), path.stat().st_mtime)
        except OSError:
            continue  # sphinxcontrib-bibtex reports a missing file itself
        if key not in _LOADED:
            _LOADED[key] = load(path)
        found.append(_LOADED[key])
    return found


def shown(app: Sphinx, path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path(app.confdir).resolve()))
    except ValueError:
        return str(path)


class _AlreadyReported(logging_std.Filter):
    """Drops sphinxcontrib-bibtex's "could not find bibtex key" for keys absent from every
    .bib file: :func:`check_page` has reported those, with the page, the line and the fix."""

    def __init__(self, app: Sphinx) -> None:
        super().__init__()
        self.app = app

    def filter(self, record: logging_std.LogRecord) -> bool:
        if getattr(record, "subtype", None) == "bibfile_data_error":
            # a key given twice: reported by check_bibfiles, at both lines, with the fix
            return "repeated bibliography entry" not in record.getMessage()
        if getattr(record, "subtype", None) != "key_not_found":
            return True
        match = re.match(r'could not find bibtex key "([^"]+)"', record.getMessage())
        keys = {key for bib in bibliographies(self.app) for key in bib.entries}
        return not (match and match.group(1) not in keys)


def quiet_duplicate_key_warnings(app: Sphinx) -> None:
    for name in ("sphinx.sphinxcontrib.bibtex.domain", "sphinx.sphinxcontrib.bibtex.bibfile"):
        target = logging_std.getLogger(name)
        for old in [f for f in target.filters if isinstance(f, _AlreadyReported)]:
            target.removeFilter(old)  # one per process: the app of an earlier build is gone
        target.addFilter(_AlreadyReported(app))


_BIB_PROBLEMS: dict[int, int] = {}  # id(app) -> problems found in the .bib files this build


def check_bibfiles(app: Sphinx) -> None:
    """builder-inited: every rule of every entry, and every registry source's key (cheap, so
    on every build)."""
    count = 0
    bibs = bibliographies(app)
    for bib in bibs:
        for problem in bib.problems:
            count += 1
            logger.error(
                problem.message,
                location=f"{shown(app, bib.path)}:{problem.line}",
                type="atlas",
                subtype="refs.bib",
            )
    _BIB_PROBLEMS[id(app)] = count + check_registry_cites(app, bibs)


def check_registry_cites(app: Sphinx, bibs: list[Bibliography]) -> int:
    """Every ``cite:KEY`` source in ``labkit/registry/`` names an entry; returns the errors."""
    from atlas.refs.registry_cites import near_keys, unknown_cites
    from atlas.teach.config import labkit_root

    registry = labkit_root(app) / "registry"
    if (
        not bibs
        or not registry.is_dir()
        or not registry.is_relative_to(Path(app.confdir).resolve())
    ):
        return 0  # a fixture book with a bibliography of its own reads the book's labkit
    keys = {key for bib in bibs for key in bib.entries}
    bibfile = shown(app, bibs[0].path)
    unknown = unknown_cites(registry, keys)
    for cite in unknown:
        near = near_keys(cite.key, keys)
        hint = f" (near: {', '.join(near)})" if near else ""
        logger.error(
            f"registry source 'cite:{cite.key}' is not in {bibfile}{hint}: fix the key, or add "
            "the entry (with url) at the end of the bibliography",
            location=f"{shown(app, cite.path)}:{cite.line}",
            type="atlas",
            subtype="refs.registry",
        )
    return len(unknown)


def fail_on_bib_problems(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: a bibliography that breaks a rule fails the build (exit 1), even
    without -W; each problem was reported at its line of the .bib file."""
    count = _BIB_PROBLEMS.pop(id(app), 0)
    if exception is None and count:
        app.statuscode = 1


def node_location(app: Sphinx, docname: str, node: nodes.Node) -> tuple[str, int | None] | str:
    """Where a node is: its page and line, or its own file and line when it comes from a file
    the page includes (the page's name with the included file's line would mislead)."""
    source = getattr(node, "source", None)
    page = Path(app.env.doc2path(docname)).resolve()
    if source and Path(source).resolve() != page:
        return f"{source}:{node_line(node) or ''}"
    return (docname, node_line(node))


def node_line(node: nodes.Node) -> int | None:
    current: Any = node
    while current is not None:
        if getattr(current, "line", None):
            return current.line
        current = current.parent
    return None


def cited_keys(node: pending_xref) -> list[str]:
    from sphinxcontrib.bibtex.citation_target import parse_citation_targets

    return [target.key for target in parse_citation_targets(node["reftarget"])]


def check_page(app: Sphinx, doctree: nodes.document) -> None:
    """doctree-read: citations and raw links of one page (before bibliographies expand)."""
    docname = app.env.docname
    bibs = bibliographies(app)
    keys = {key for bib in bibs for key in bib.entries}
    identities: dict[str, str] = {}
    for bib in bibs:
        for ident, key in bib.identities().items():
            identities.setdefault(ident, key)
    bibfile = shown(app, bibs[0].path) if bibs else "source/references.bib"
    for node in doctree.findall(pending_xref):
        if node.get("refdomain") != "cite":
            continue
        for key in cited_keys(node):
            if key not in keys:
                near = sorted(k for k in keys if k[:4] == key[:4])[:3]
                hint = f" (near: {', '.join(near)})" if near else ""
                logger.error(
                    f"cited key '{key}' is not in {bibfile}{hint}: fix the key, or add the entry "
                    "(with url; arXiv entries with eprint and the abs page)",
                    location=node_location(app, docname, node),
                    type="atlas",
                    subtype="refs.key",
                )
    for node in doctree.findall(nodes.reference):
        uri = node.get("refuri", "")
        if not uri.startswith(("http://", "https://")):
            continue
        on_arxiv = arxiv.paper_url(uri)
        if on_arxiv is not None:
            problem = arxiv.id_problem(on_arxiv[1], allow_version=True)
            if problem:
                logger.error(
                    f"malformed arXiv link {uri}: {problem}",
                    location=node_location(app, docname, node),
                    type="atlas",
                    subtype="refs.arxiv",
                )
                continue
        ident = arxiv.paper_identity(uri)
        key = identities.get(ident) if ident else None
        if key is not None:
            logger.error(
                f"raw link to a paper the bibliography holds ({uri}): cite it instead, "
                f"{{cite:p}}`{key}` or {{cite:t}}`{key}`",
                location=node_location(app, docname, node),
                type="atlas",
                subtype="refs.rawlink",
            )


def check_one_citation_list(app: Sphinx, env: Any) -> None:
    """env-check-consistency: one citation list in the book, or the same key collides.

    Every ``{cite}`` links into the one ``bibliography`` citation list (the full bibliography
    page); a chapter lists its works with ``chapter-references`` (a bullet list, no targets).
    """
    domain = env.get_domain("cite")
    lists = sorted(
        (key.docname, value.line)
        for key, value in domain.bibliographies.items()
        if value.list_ == "citation"
    )
    if len({doc for doc, _ in lists}) <= 1:
        return
    docs = sorted({doc for doc, _ in lists})
    keep = "bibliography" if "bibliography" in docs else docs[0]
    for doc, line in lists:
        if doc != keep:
            logger.error(
                f"a second citation list (the book's is in {keep}): cites from two lists collide "
                "(duplicate citation/label); end a chapter index with ```{chapter-references}``` "
                "instead of ```{bibliography}```",
                location=(doc, line),
                type="atlas",
                subtype="refs.lists",
            )
