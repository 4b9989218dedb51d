"""Sphinx configuration of the LLM Infra Atlas: the one place settings live.

Build with ``make html`` (or ``sphinx-build -M html source _build -c .``). Paths here are
relative to this file's folder, not to ``source/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "ext"))  # our extensions, importable without an install

# -- Project ------------------------------------------------------------------------------------
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
    "atlas",  # ext/atlas: upstream citations, labs, references, offline assets, PDF
]
# The copy button copies code alone: Pygments marks the prompts (>>>, ..., $) of lab transcripts
# and console blocks as .gp and their output as .go, and neither is copied.
copybutton_exclude = ".linenos, .gp, .go"

root_doc = "index"
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
# Every cross-reference must resolve, in every build (not only `make check`): a setting that
# differed between targets would make each switch re-read the book.
nitpicky = True
# Captioned figures (diagrams with :caption:) are numbered and {numref} can cite them; the word
# ("Figure", 图) is each edition's own (atlas.assets.figures).
numfig = True
templates_path: list[str] = []
# Two builds of the same commit give the same HTML: no build date in the pages.
html_last_updated_fmt = None
today_fmt = "%Y"

# -- Chinese edition (atlas.i18n) ----------------------------------------------------------------
# The English pages are the source; the Chinese edition is built from gettext catalogs with
# -D language=zh_CN (`make html` builds both, the Chinese one into _build/html/zh). `make po`
# refreshes the catalogs, one per page (gettext_compact = False):
# locales/zh_CN/LC_MESSAGES/<page>.po.
language = "en"
locale_dirs = [str(ROOT / "locales")]  # absolute: Sphinx reads locale_dirs relative to source/
gettext_compact = False
gettext_uuid = False  # uuids would change every catalog on every run
gettext_location = True  # "#: source/page.md:LINE" tells the translator where a unit is
# Only prose is a unit: literal blocks (code, upstream citations, lab transcripts), doctest
# blocks, raw HTML, index entries and images are shared by both editions, never copied.
gettext_additional_targets: list[str] = []
# Every page links to the same page in the other edition (relative links: they work from disk).
atlas_i18n_editions = {"zh_CN": "zh"}
# Pages marked complete: locales/zh_CN/complete.toml; the glossary: locales/zh_CN/glossary.toml.

# -- MyST ---------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist", "attrs_inline", "attrs_block"]
myst_fence_as_directive = ["mermaid"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

# -- HTML ---------------------------------------------------------------------------------------
html_theme = "furo"
html_title = "LLM Infra Atlas"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": True,
}
# -- Links out (atlas.links) --------------------------------------------------------------------
# The repository's address, https://github.com/OWNER/NAME (or GitLab): the one source of every
# link out of the book (furo's view/edit buttons and footer icon, "Report a problem on this
# page", the PDF's labcode captions, the clone command under each lab). Unset: this book has no
# public address recorded yet; the pages then link only the PDFs, and "Run at home" names a
# placeholder for the clone. Set it (or pass -D atlas_repository_url=...) once it is published.
atlas_repository_url: str | None = None
atlas_repository_branch = "main"  # the branch the edit links point at
html_copy_source = False
html_show_sourcelink = False

# -- Offline assets (atlas.assets) --------------------------------------------------------------
# MathJax and mermaid come from npm packages locked in package-lock.json and are copied into
# the build; the book never loads anything from a CDN.
atlas_node_modules = str(ROOT / "node_modules")
mathjax_path = "vendor/mathjax/tex-mml-chtml.js"
mermaid_output_format = "raw"

# -- References (atlas.refs) --------------------------------------------------------------------
bibtex_bibfiles = [str(ROOT / "source" / "references.bib")]
bibtex_default_style = "unsrt"
bibtex_reference_style = "author_year"
# {cite:p}/{cite:t} link to the one citation list, source/bibliography.md; a chapter index ends
# with ```{chapter-references}``` (a bullet list of the works its pages cite). atlas.refs makes a
# missing key, an entry without url, a malformed arXiv id, and a raw link to a paper held in the
# bibliography errors at the page or .bib line.

# -- Upstream citations (atlas.upstream) --------------------------------------------------------
# Code is read from git objects at pinned commits: the initialised submodule, else the bare
# partial clone `make upstreams` makes in .git/atlas-upstreams/NAME.git. A folder of extra
# NAME.git stores may be named here or in $ATLAS_UPSTREAMS_ROOT (searched first).
atlas_upstreams_root: str | None = None
atlas_snippets_cache: str | None = None  # None: snippets_cache/ beside the conf.py in use
atlas_upstream_max_lines = 400  # a whole-file citation longer than this must cite a range
# "update": a build with the objects records new citations in upstreams.lock (commit it);
# "frozen": a citation missing from the lock is an error (`make check` builds frozen).
atlas_upstream_lock = "update"

# -- Labs (atlas.labs) --------------------------------------------------------------------------
# Labs run at build time in workers forked from a zygote that imported torch once; results are
# cached in _build/.labs-cache. "auto" uses the cache, "force" re-runs all (make labs), "off"
# renders labs marked "not run".
atlas_labs_mode = "auto"
atlas_labs_timeout = 60.0  # seconds per lab, unless the lab sets :timeout:
atlas_labs_memory_limit_mb = 8192  # address-space cap of a page's worker (RLIMIT_AS); 0: none

# -- Link checking (atlas.refs.linkcheck) -------------------------------------------------------
# `make linkcheck`: every external link (bibliography included), then `python -m atlas.refs.report`
# writes _build/linkcheck/report.txt. Offline, every host fails fast: a name that does not resolve
# stops further requests to that host; the timeout budget bounds hosts that do not answer.
linkcheck_timeout = 10  # seconds per request
linkcheck_retries = 3  # attempts per link; back-off 2 s, 4 s between them (transient errors only)
linkcheck_workers = 5
linkcheck_rate_limit_timeout = 120.0  # longest Retry-After / 429 back-off we wait for
linkcheck_report_timeouts_as_broken = False
linkcheck_anchors = True
# GitHub draws #L10-L40 anchors with JavaScript: pinned links are verified from git objects.
linkcheck_anchors_ignore_for_url = [r"https://github\.com/.*"]
linkcheck_allowed_redirects = {
    r"https?://(www\.|export\.)?arxiv\.org/.*": r"https://arxiv\.org/.*",  # versions, http->https
    r"https?://(dx\.)?doi\.org/.*": r"https?://.*",  # DOI resolvers send to the publisher
    r"https?://github\.com/[^/]+/[^/]+/?$": r"https://github\.com/.*",  # renamed repositories
}
atlas_linkcheck_host_intervals = {"arxiv.org": 3.0}  # arXiv asks for one request per 3 s
atlas_linkcheck_backoff = 2.0
atlas_linkcheck_host_failures = 3
atlas_linkcheck_max_rate_limits = 5
atlas_linkcheck_cache_days = 1.0  # a re-run within a day sends nothing for answered links

# -- LaTeX / PDF (atlas.latex) ------------------------------------------------------------------
# `make pdf` runs `python -m atlas.latex build`: it checks the system tools, then builds with the
# latex builder and xelatex into _build/pdf/atlas.pdf. Fonts: FreeSerif and FreeSans for prose,
# DejaVu Sans Mono for code, Noto CJK through xeCJK for Chinese, Japanese and Korean.
latex_engine = "xelatex"
latex_documents = [(root_doc, "atlas.tex", project, author, "manual", False)]
latex_show_urls = "footnote"  # every external link (code-caption permalinks too) as a footnote
latex_show_pagerefs = True
latex_domain_indices = False
latex_elements = {
    "papersize": "a4paper",
    "pointsize": "10pt",
    "extraclassoptions": "openany,oneside",  # no blank pages between chapters
    "fontpkg": r"""
\setmainfont{FreeSerif}
\setsansfont{FreeSans}
\setmonofont{DejaVu Sans Mono}[Scale=MatchLowercase]
\usepackage{xeCJK}
\setCJKmainfont{Noto Serif CJK SC}
\setCJKsansfont{Noto Sans CJK SC}
\setCJKmonofont{Noto Sans Mono CJK SC}
""",
    # Code: long lines wrap, even inside a token, rather than run off the page.
    "sphinxsetup": "verbatimforcewraps=true, verbatimhintsturnover=true",
    # Sphinx would title the contents after the first toctree's caption.
    "tableofcontents": r"\renewcommand{\contentsname}{Contents}\sphinxtableofcontents",
    "printindex": r"\footnotesize\raggedright\atlasprintindex",  # atlas.sty
}
# The root page's toctrees with these captions open (close) the PDF unnumbered; every other
# caption becomes a part whose pages are its chapters (atlas.latex.structure).
atlas_latex_front_matter = ["Front matter"]
atlas_latex_back_matter = ["Back matter"]  # unnumbered, after the parts
# atlas.latex adds ext/atlas/latex/texinputs/atlas.sty to the preamble.
# Mermaid diagrams become vector PDF through mermaid-cli and Debian's Chromium (package.json
# locks the versions). A diagram that cannot be rendered stops the PDF build.
mermaid_cmd = str(ROOT / "node_modules" / ".bin" / "mmdc")
_PDF_TOOLS = ROOT / "ext" / "atlas" / "latex"
mermaid_params = [
    *("--puppeteerConfigFile", str(_PDF_TOOLS / "puppeteer-config.json")),  # Debian's chromium
    *("--configFile", str(_PDF_TOOLS / "mermaid-config.json")),  # fonts that cover CJK labels
    "--pdfFit",  # the page is the diagram's size, not A4
    "--quiet",
]
