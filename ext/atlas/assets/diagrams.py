"""Every mermaid diagram of the book is parsed in every build; a syntax error is an error at its
page and line.

Without this check a broken diagram ships in the HTML and the browser draws "Syntax error", with
no message, for the reader to find. The pieces:

- :class:`LocatedMermaid` replaces sphinxcontrib-mermaid's directive (same rendering) and
  records where the diagram's text starts on the page (the node alone carries no line);
- :class:`DiagramsCollector` keeps each page's diagrams in the environment
  (:mod:`atlas.project.envstate`), so a build that reads no page still knows them all;
- :func:`check_diagrams` (``build-finished``, every build) parses what the cache has not seen
  in one node run (:mod:`atlas.assets.mermaid_parser`), reports every broken diagram of the book
  and makes the build's status non-zero, as a failing lab does. It runs after the warning ledger
  has saved (:mod:`atlas.project.ledger`): the check repeats itself in every build, so a
  recorded copy could only go stale (a mermaid upgrade rewording a message).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinxcontrib.mermaid import Mermaid, mermaid

from atlas.assets.config import AssetsConfig
from atlas.assets.mermaid_parser import (
    ParseError,
    ParserUnavailable,
    Verdicts,
    diagram_hash,
    front_matter_lines,
    mermaid_version,
    parse_all,
)
from atlas.project.envstate import PageState, StateCollector, state_of

logger = logging.getLogger(__name__)
CACHE = "atlas-mermaid-parse.json"  # in the doctree folder, beside the environment
FIX = (
    "Fix the diagram's syntax at that line (mermaid {version}, the version package-lock.json "
    "pins, is the one the book's pages load)."
)


@dataclass(frozen=True)
class Diagram:
    """One diagram of a page: its text as mermaid receives it, and where that text is."""

    text: str
    line: int  # the page line of the directive (or fence)
    first_line: int | None  # the page line of the diagram's first line (None: read from a file)
    added_lines: int  # lines the directive put before the page's text (a config front matter)
    source: str = ""  # the file it is written in, when not the page (an included file)


@dataclass
class DiagramsState(PageState):
    diagrams: dict[str, list[Diagram]] = field(default_factory=dict)  # docname -> its diagrams


class LocatedMermaid(Mermaid):
    """sphinxcontrib-mermaid's directive, whose nodes also say where their text is."""

    def run(self, **kwargs: Any) -> list[nodes.Node]:
        result = super().run(**kwargs)
        content = "\n".join(self.content)
        myst = type(self.state).__module__.startswith("myst_parser")
        first = self.lineno + 1 + self.content_offset if myst else self.content_offset + 1
        source, line = self.state_machine.get_source_and_line(self.lineno)
        for top in result:
            for node in top.findall(mermaid) if isinstance(top, nodes.Element) else []:
                node.source, node.line = source, line
                node["atlas_first_line"] = None if self.arguments else first
                added = node["code"].count("\n") - content.count("\n") if content else 0
                node["atlas_added_lines"] = max(added, 0)
        return result


class DiagramsCollector(StateCollector):
    state = DiagramsState

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        page = str(Path(app.env.doc2path(app.env.docname)).resolve())
        found = [
            Diagram(
                node["code"],
                node.line or 0,
                node.get("atlas_first_line"),
                node.get("atlas_added_lines", 0),
                "" if not node.source or str(Path(node.source).resolve()) == page else node.source,
            )
            for node in doctree.findall(mermaid)
        ]
        if found:
            state_of(app.env, DiagramsState).diagrams[app.env.docname] = found


def page_line(diagram: Diagram, error: ParseError) -> int:
    """The page line of the diagram line mermaid names (its lines start after front matter)."""
    if diagram.first_line is None:
        return diagram.line
    # no line named (an unknown diagram type): the diagram's first line after front matter
    in_text = front_matter_lines(diagram.text) + (error.line or 1)  # 1-based, in diagram.text
    return max(diagram.first_line + in_text - 1 - diagram.added_lines, diagram.first_line)


def _detail(message: str) -> str:
    """mermaid's message without its own "Parse error on line N:" (the page line replaces it)."""
    lines = [line for line in message.strip().splitlines() if line.strip()]
    if lines and lines[0].startswith("Parse error on line") and lines[0].endswith(":"):
        lines = lines[1:]
    return "\n".join(lines[:6])


def check_diagrams(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: parse the diagrams the cache has not seen; report every broken one."""
    env = app.env
    if exception is not None or env is None:
        return
    pages = state_of(env, DiagramsState).diagrams
    if not pages:
        return
    node_modules = AssetsConfig.of(app).node_modules
    cache = Verdicts(Path(app.doctreedir) / CACHE)
    try:
        version = mermaid_version(node_modules)
        hashes = {diagram_hash(d.text, version): d.text for found in pages.values() for d in found}
        cache.record(parse_all(cache.missing(hashes), node_modules))
    except ParserUnavailable as exc:
        logger.warning(
            f"the book's mermaid diagrams were not parsed: {exc}. A broken diagram would reach "
            "the HTML unnoticed; run `make setup` (it installs node's packages) with node on "
            "PATH",
            type="atlas",
            subtype="mermaid.unchecked",
        )
        return
    finally:
        cache.save()
    for docname in sorted(pages):
        for diagram in pages[docname]:
            error = cache.known.get(diagram_hash(diagram.text, version))
            if error is None:
                continue
            app.statuscode = 1  # a broken diagram fails the build, even without -W
            logger.error(
                f"mermaid cannot parse this diagram:\n{_detail(error.message)}\n"
                + FIX.format(version=version),
                location=(
                    f"{diagram.source}:{page_line(diagram, error)}"
                    if diagram.source
                    else (docname, page_line(diagram, error))
                ),
                type="atlas",
                subtype="mermaid",
            )
