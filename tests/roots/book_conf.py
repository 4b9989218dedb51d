"""The settings every fixture book under tests/roots is built with (``$ATLAS_BOOK_CONF``).

Minimal on purpose: the extensions and settings the fixtures exercise, and a bibliography of two
entries, not the real conf.py's 255. A fixture then builds in a fraction of the time, and a
change to the book's conf.py cannot change what a fixture test asserts. The real conf.py is
built by one smoke root (test-real-conf) and by the real book's build (``pytest -m slow``).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "ext"))

project = "LLM Infra Atlas"
author = "The LLM Infra Atlas authors"
copyright = "2026, The LLM Infra Atlas authors"  # noqa: A001
release = "0.1"
extensions = [
    "myst_parser",
    "sphinx_design",
    "sphinxcontrib.mermaid",
    "sphinxcontrib.bibtex",
    "sphinx_copybutton",
    "atlas",
]
copybutton_exclude = ".linenos, .gp, .go"  # as conf.py: prompts and outputs are not copied
root_doc = "index"
exclude_patterns = ["_build"]
nitpicky = True
# Captioned figures (diagrams with :caption:) are numbered and {numref} can cite them; the word
# ("Figure", 图) is each edition's own (atlas.assets.figures).
numfig = True
html_last_updated_fmt = None  # two builds of the same sources give the same HTML
today_fmt = "%Y"

myst_enable_extensions = ["dollarmath", "colon_fence", "deflist", "attrs_inline", "attrs_block"]
myst_fence_as_directive = ["mermaid"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

html_theme = "furo"  # the offline test opens the pages in furo's dark mode
html_copy_source = False
html_show_sourcelink = False

atlas_node_modules = str(REPO / "node_modules")
mathjax_path = "vendor/mathjax/tex-mml-chtml.js"
mermaid_output_format = "raw"

bibtex_bibfiles = [str(Path(__file__).resolve().parent / "book.bib")]
bibtex_default_style = "unsrt"
bibtex_reference_style = "author_year"

# The two PDF roots (test-pdf, test-pdf-glyph): the book's fonts and diagram renderer.
latex_engine = "xelatex"
latex_documents = [(root_doc, "atlas.tex", project, author, "manual", False)]
latex_show_urls = "footnote"
latex_show_pagerefs = True
latex_domain_indices = False
latex_elements = {
    "papersize": "a4paper",
    "pointsize": "10pt",
    "extraclassoptions": "openany,oneside",
    "fontpkg": r"""
\setmainfont{FreeSerif}
\setsansfont{FreeSans}
\setmonofont{DejaVu Sans Mono}[Scale=MatchLowercase]
\usepackage{xeCJK}
\setCJKmainfont{Noto Serif CJK SC}
\setCJKsansfont{Noto Sans CJK SC}
\setCJKmonofont{Noto Sans Mono CJK SC}
""",
    "sphinxsetup": "verbatimforcewraps=true, verbatimhintsturnover=true",
    "tableofcontents": r"\renewcommand{\contentsname}{Contents}\sphinxtableofcontents",
    "printindex": r"\footnotesize\raggedright\atlasprintindex",
}
atlas_latex_front_matter = ["Front matter"]
atlas_latex_back_matter = ["Back matter"]
_PDF_TOOLS = REPO / "ext" / "atlas" / "latex"
mermaid_cmd = str(REPO / "node_modules" / ".bin" / "mmdc")
mermaid_params = [
    *("--puppeteerConfigFile", str(_PDF_TOOLS / "puppeteer-config.json")),
    *("--configFile", str(_PDF_TOOLS / "mermaid-config.json")),
    "--pdfFit",
    "--quiet",
]
