"""Smoke root: a small book built with the real conf.py and its whole bibliography, so that the
fixtures' minimal settings (tests/roots/book_conf.py) cannot hide a broken real configuration."""

import os
import runpy

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_REAL_BOOK_CONF"]).items() if k[:2] != "__"}
)
