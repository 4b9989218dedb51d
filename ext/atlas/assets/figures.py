"""Numbered figures: every diagram with a caption is numbered by Sphinx's own numfig ("Figure
12.3" in the PDF, "Figure 3" in the HTML of a book whose toctrees are not numbered) and can be
cited with ``{numref}``; the Chinese edition says 图.

Why this module: Sphinx's default word is "Fig. %s", and ``conf.py`` cannot give each edition its
own (the language arrives by ``-D`` after ``conf.py`` ran). So the word is one of the book's
interface words (atlas.ui), set once Sphinx has filled in its defaults (config-inited, priority
800) and the catalogs are loaded; a ``numfig_format`` that ``conf.py`` gives for figures wins.
sphinxcontrib-mermaid's own ``:caption:`` and ``:name:`` make a diagram a figure.

Only figures: numfig would also number every captioned code block ("Listing 1191" on each
upstream citation) and table. Sphinx numbers what its standard domain lists as enumerable, so
tables and code blocks are taken off that list once the pages are read (their ids, labels and
captions were made while reading, as before) and before the numbers are assigned
(:func:`only_figures`, ahead of Sphinx's toctree collector at ``env-get-updated``).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment

from atlas.ui import _

PRIORITY = 850  # after Sphinx's init_numfig_format (800) and atlas.i18n's catalogs (500)
BEFORE_NUMBERS = 400  # env-get-updated: Sphinx's TocTreeCollector numbers figures at 500


def figure_word(app: Sphinx, config: Config) -> None:
    """config-inited: "Figure %s" in the edition's language, unless conf.py chose a format."""
    if "figure" not in (config._raw_config.get("numfig_format") or {}):
        config.numfig_format = {**config.numfig_format, "figure": _("Figure %s")}


def only_figures(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """env-get-updated, before the numbers: numfig numbers figures only, not captioned code
    blocks or tables (no page needs re-reading for it)."""
    enumerable = env.domains.standard_domain.enumerable_nodes
    for kind in (nodes.table, nodes.container):
        enumerable.pop(kind, None)
    return []
