"""Fixture book built with the fixtures' settings (tests/roots/book_conf.py)."""

import os
import runpy

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
