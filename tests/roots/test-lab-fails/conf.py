"""Fixture book built with the fixtures' settings (tests/roots/book_conf.py)."""

import os
import runpy

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
# The labs of this book test the runner (or the teaching check), not a claim: they assert nothing.
atlas_labs_checks_must_assert = False
