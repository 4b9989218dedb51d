"""Fixture book built with the fixtures' settings (tests/roots/book_conf.py)."""

import os
import runpy

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
# labcode and the teaching check read this small labkit, so line numbers in tests stay put.
atlas_labkit_root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "labkit")
# The labs of this book test the runner (or the teaching check), not a claim: they assert nothing.
atlas_labs_checks_must_assert = False
