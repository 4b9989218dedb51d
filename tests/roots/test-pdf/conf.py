"""Fixture book built with the fixtures' settings (tests/roots/book_conf.py), and a stand-in
for the upstream directive that needs no git objects (``_ext/fixture_citation.py``)."""

import os
import runpy
import sys

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))
extensions = [*globals()["extensions"], "fixture_citation"]
