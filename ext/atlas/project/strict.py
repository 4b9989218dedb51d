"""What a strict build tolerates, without changing what Sphinx reads.

``suppress_warnings`` is a configuration value that makes Sphinx re-read every page when it
changes, so ``make check`` (which tolerates ``upstream.missing``) after ``make html`` re-read the
whole book. ``atlas_strict_allow`` says the same thing without touching the environment: a
warning of a listed type (``upstream.missing``) or of any subtype of a listed type
(``upstream``) is neither shown nor counted. Errors of a listed type are never tolerated: a
strict build may allow a placeholder, not a wrong citation.
"""

from __future__ import annotations

import logging as std_logging

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util.logging import NAMESPACE, WarningStreamHandler, is_suppressed_warning

from atlas.project.config import ProjectConfig


class Allow(std_logging.Filter):
    """Drops tolerated warnings before Sphinx counts them."""

    def __init__(self, app: Sphinx) -> None:
        super().__init__()
        self.app = app

    def filter(self, record: std_logging.LogRecord) -> bool:
        if record.levelno >= std_logging.ERROR:
            return True
        try:
            allowed = ProjectConfig.of(self.app).strict_allow
        except AttributeError:
            return True
        kind, subtype = getattr(record, "type", ""), getattr(record, "subtype", "")
        return not (allowed and is_suppressed_warning(kind, subtype, allowed))


def install(app: Sphinx, config: Config) -> None:
    """config-inited: first filter of Sphinx's warning stream (before its own counting)."""
    for handler in std_logging.getLogger(NAMESPACE).handlers:
        if isinstance(handler, WarningStreamHandler):
            for old in [f for f in handler.filters if isinstance(f, Allow)]:
                handler.removeFilter(old)
            handler.filters.insert(0, Allow(app))
