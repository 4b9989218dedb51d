"""Links out of the book, on every HTML page of both editions: the repository, "edit this page",
"report a problem on this page", and the PDFs.

- :mod:`atlas.links.theme` fills furo's own options (view and edit buttons, a footer icon)
  from the one repository setting, ``atlas_repository_url`` (atlas.project's, with its branch);
- :mod:`atlas.links.page` appends what furo lacks under each page: the repository, the
  prefilled issue link, and both editions' PDFs (which stay when no repository is set).

The addresses come from :class:`atlas.project.repository.Repository`, built from the settings
(:mod:`atlas.project.checkout`); nothing here holds an address of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

STATIC = Path(__file__).resolve().parent / "static"


def _config_inited(app: Sphinx, config: Config) -> None:
    from atlas.links.theme import apply

    if str(STATIC) not in [str(p) for p in config.html_static_path]:
        config.html_static_path.append(str(STATIC))
    apply(app, config)


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.links.page import page_context

    # after atlas.project checked the settings (priority 1), before it snapshots them (999)
    app.connect("config-inited", _config_inited, priority=800)
    app.add_css_file("atlas-links.css")
    app.connect("html-page-context", page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
