"""The book's history, for its readers: a dated changelog and each page's last change.

Everything comes from the book's own git history at the commit being built, so two builds of
one commit say the same thing, and a copy built outside git says that it cannot.

- :mod:`atlas.history.log` reads the main line once (``git log --first-parent`` with each
  commit's files and line counts) and parses it;
- :mod:`atlas.history.events` turns it into days (pages added, substantially revised, pins
  moved, pages translated) and each path's last change;
- :mod:`atlas.history.state` keeps that on the environment, keyed by HEAD, and re-reads the
  pages it shows when HEAD moves;
- :mod:`atlas.history.directive` is ``{changelog}``; :mod:`atlas.history.footer` writes "Last
  changed on ..." under every HTML page; :mod:`atlas.history.config` its one setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

STATIC = Path(__file__).resolve().parent / "static"


def _config_inited(app: Sphinx, config: Config) -> None:
    if str(STATIC) not in [str(p) for p in config.html_static_path]:
        config.html_static_path.append(str(STATIC))


def _builder_inited(app: Sphinx) -> None:
    from atlas.history.state import history_for

    history_for(app)  # in the main process: parallel readers inherit it


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.history.config import HistoryConfig
    from atlas.history.directive import ChangelogDirective
    from atlas.history.footer import page_context
    from atlas.history.state import HistoryCollector
    from atlas.project.registry import add_settings

    add_settings(app, HistoryConfig)
    app.add_directive("changelog", ChangelogDirective)
    app.add_env_collector(HistoryCollector)
    app.connect("config-inited", _config_inited)
    app.add_css_file("atlas-history.css")
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", page_context)
    # env_version: bump when HistoryState changes shape.
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
