"""Fixture book built with the Atlas's own settings and a bibliography of its own."""

import os
import runpy

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
bibtex_bibfiles = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "refs.bib")]
