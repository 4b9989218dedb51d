"""Fixture book whose labkit registry cites one key the bibliography lacks."""

import os
import runpy

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
_HERE = os.path.dirname(os.path.abspath(__file__))
bibtex_bibfiles = [os.path.join(_HERE, "refs.bib")]
atlas_labkit_root = os.path.join(_HERE, "labkit")
