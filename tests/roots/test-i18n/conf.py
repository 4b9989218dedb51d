"""Fixture book of the Chinese edition: the Atlas's own settings, its own catalogs."""

import os
import runpy

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
locale_dirs = ["locales"]  # this book's locales/zh_CN, not the Atlas's
