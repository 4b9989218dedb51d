"""atlas.latex: the offline PDF (``make pdf``, ``python -m atlas.latex build``).

Modules, one job each. Sphinx-side (set up here, for the latex builder):

- ``structure``: the root page's toctrees typeset as a book: unnumbered front matter, then one
  part per toctree caption; ``config``: which captions are front and back matter;
- ``index``: every upstream citation indexed under its upstream and file, from the
  citation's attributes;
- ``mermaid``: mermaid diagrams as vector PDF, or the build stops (replaces
  sphinxcontrib-mermaid's LaTeX visitor, which lets a diagram vanish);
- ``svg``: SVG figures converted to vector PDF;
- ``urls``: no URL footnote for a URL already printed beside its link;
- ``errors``: ``PdfError``, the PDF build's one error type (a message, no traceback);
- this module ships ``atlas.sty`` (xeCJK punctuation classes, sphinx-design components
  degraded to boxed text, code captions) and loads it after Sphinx's own packages.

The command (``__main__``):

- ``build``: the PDF in three checked steps (tools, Sphinx's latex builder, latexmk);
- ``tools``: the system tools it needs and the one ``apt-get install`` line for them;
- ``logscan``: xelatex's log read back: errors, missing glyphs, overfull lines, each at its
  book page.

Settings of the engine, fonts, paper and URL footnotes live in conf.py's LaTeX section.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

TEXINPUTS = Path(__file__).parent / "texinputs"
STYLE = TEXINPUTS / "atlas.sty"
XINDY_MODULE = TEXINPUTS / "atlas.xdy"  # loaded by atlas.latex.build (XINDYOPTS)


# Sphinx maps these to math-mode commands even for xelatex. Inside highlighted code the math
# group gets split across Pygments' style macros, and LaTeX stops ("Extra }, or forgotten $")
# on a line of upstream code that prints a check mark. Our fonts have the glyphs themselves
# (and the build fails on any glyph they lack), so for xelatex the characters pass through.
UNICODE_PASSTHROUGH = "\u2713\u2714\u2715\u2716"  # ✓ ✔ ✕ ✖


def _pass_unicode_through(engine: str) -> None:
    if engine not in ("xelatex", "lualatex"):
        return
    from sphinx.util import texescape

    for table in (
        texescape._tex_escape_map_without_unicode,
        texescape._tex_hlescape_map_without_unicode,
    ):
        for char in UNICODE_PASSTHROUGH:
            table.pop(ord(char), None)


def _builder_inited(app: Sphinx) -> None:
    if app.builder.format == "latex":  # after the latex builder filled the tables
        _pass_unicode_through(app.config.latex_engine)


def _config_inited(app: Sphinx, config: Config) -> None:
    files = list(config.latex_additional_files)
    missing = [str(f) for f in (STYLE, XINDY_MODULE) if str(f) not in files]
    if missing:
        config.latex_additional_files = [*files, *missing]
    elements = dict(config.latex_elements)
    preamble = elements.get("preamble", "")
    if r"\usepackage{atlas}" not in preamble:
        elements["preamble"] = preamble + "\n\\usepackage{atlas}\n"
        config.latex_elements = elements


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.project.registry import add_settings

    app.setup_extension("sphinxcontrib.mermaid")
    from sphinxcontrib.mermaid import mermaid

    from atlas.latex.config import LatexConfig
    from atlas.latex.index import CitedCodeIndex
    from atlas.latex.mermaid import visit_mermaid_latex
    from atlas.latex.structure import BookStructure
    from atlas.latex.svg import SvgToPdf
    from atlas.latex.urls import HideVisibleUrls, RestoreVisibleUrls

    app.add_node(mermaid, override=True, latex=(visit_mermaid_latex, None))
    add_settings(app, LatexConfig)
    app.add_post_transform(BookStructure)
    app.add_post_transform(CitedCodeIndex)
    app.add_post_transform(SvgToPdf)
    app.add_post_transform(HideVisibleUrls)
    app.add_post_transform(RestoreVisibleUrls)
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
