"""Fixture book for the upstream directive, built with the fixtures' settings
(tests/roots/book_conf.py).

The test copies this folder, makes it a git repository and registers the fixture upstream
``demo`` (tests/upstream_demo.py) as a submodule gitlink, like the real book's upstreams.
"""

import os
import runpy

globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
