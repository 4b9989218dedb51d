"""Numbered figures: every diagram with a caption is numbered by Sphinx's own numfig ("Figure
12.3" in the PDF, "Figure 3" in the HTML of a book whose toctrees are not numbered) and can be
cited with ``{numref}``; the Chinese edition says 图.

Why this module: Sphinx's default word is "Fig. %s", and ``conf.py`` cannot give each edition its
own (the language arrives by ``-D`` after ``conf.py`` ran). So the word is one of the book's
interface words (atlas.ui), set once Sphinx has filled in its defaults (config-inited, priority
800) and the catalogs are loaded; a ``numfig_format`` that ``conf.py`` gives for figures wins.
sphinxcontrib-mermaid's own ``:caption:`` and ``:name:`` make a diagram a figure.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.config import Config

from atlas.ui import _

PRIORITY = 850  # after Sphinx's init_numfig_format (800) and atlas.i18n's catalogs (500)


def figure_word(app: Sphinx, config: Config) -> None:
    """config-inited: "Figure %s" in the edition's language, unless conf.py chose a format."""
    if "figure" not in (config._raw_config.get("numfig_format") or {}):
        config.numfig_format = {**config.numfig_format, "figure": _("Figure %s")}
