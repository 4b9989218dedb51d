"""Fixture book with the Atlas's own settings: pages that link to one page a test renames."""

import os
import runpy

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
