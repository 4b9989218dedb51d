"""Mermaid diagrams in the PDF: vector graphics through mermaid-cli, or the build stops.

sphinxcontrib-mermaid's LaTeX visitor only *warns* when ``mmdc`` is missing or fails, and the
PDF then silently lacks the diagram. This visitor replaces it: same rendering (its
``render_mm`` with the ``pdf`` format, so its file cache is shared), but any failure is a
:class:`PdfError` that names the page, the line and the fix.
"""

from __future__ import annotations

from docutils import nodes
from docutils.utils import get_source_line
from sphinx.writers.latex import LaTeXTranslator
from sphinxcontrib.mermaid import MermaidError, mermaid, render_mm

from atlas.latex.errors import PdfError

FIX = (
    "Fix: run `make setup` (it runs `npm ci`, which installs mermaid-cli into node_modules) "
    "and install Debian's chromium (`sudo apt-get install --no-install-recommends chromium`)."
)


def _where(node: nodes.Element) -> str:
    source, line = get_source_line(node)
    return f"{source or '<unknown page>'}:{line or '?'}"


def visit_mermaid_latex(self: LaTeXTranslator, node: mermaid) -> None:
    """Render the diagram to a cropped vector PDF and include it; fail loudly otherwise."""
    cmd = self.builder.config.mermaid_cmd
    try:
        fname, _ = render_mm(self, node["code"], node["options"], "pdf")
    except MermaidError as exc:
        detail = str(exc).strip()
        raise PdfError(
            f"{_where(node)}: mermaid-cli could not render this diagram.\n{detail}\n{FIX}"
        ) from None
    if fname is None:  # render_mm found no executable at mermaid_cmd
        raise PdfError(
            f"{_where(node)}: the mermaid renderer {cmd!r} cannot be run, "
            f"so this diagram would be missing from the PDF.\n{FIX}"
        )
    graphic = f"\\atlasdiagram{{{fname}}}"  # atlas.sty: sized for print
    align = node.get("align")
    if align == "left":
        self.body.append(f"\n\\par\\noindent{graphic}\\par\n")
    elif align == "right":
        self.body.append(f"\n\\par\\noindent\\hspace*{{\\fill}}{graphic}\\par\n")
    else:
        self.body.append(f"\n\\begin{{center}}{graphic}\\end{{center}}\n")
    raise nodes.SkipNode
