"""Fixture book built with the Atlas's own settings."""

import os
import runpy

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
atlas_labs_checks_must_assert = False  # runner fixtures: their labs test the sandbox, not claims
