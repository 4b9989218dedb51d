"""The LLM Infra Atlas Sphinx extensions.

One feature per subpackage, each with its own ``setup(app)`` (in the manner of sphinx-design):

- ``atlas.project``: a stable configuration, the warning ledger, what strict builds allow.
- ``atlas.assets``: MathJax and mermaid served from the build, never a CDN.
- ``atlas.upstream``: the ``upstream`` directive and role, the registry of upstreams, git
  object reads, the snippet cache, the lock and drift tools.
- ``atlas.labs``: the ``lab`` directive, its forked runner, the result cache, the labs page.
- ``atlas.labkit``: helpers that labs import (never imported by Sphinx itself).
- ``atlas.processes`` (a module, no setup): what the lab runner and labkit's ranks share
  (dying with the parent, seeding, exit-status text), importing neither Sphinx nor torch.
- ``atlas.refs``: bibliography checks and link checking.
- ``atlas.latex``: the offline PDF.
- ``atlas.teach``: ``labcode`` (our lab code on the page), ``problem``/``solution``, the
  teaching check and the runnable lab files.

Each feature's ``atlas_*`` settings are one frozen dataclass in its ``config`` module
(``atlas.labs.config.LabsConfig``, ...), built on ``atlas.settings`` and checked by
``atlas.project.config``; code reads them as ``LabsConfig.of(app)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the maintainer commands (python -m atlas.upstream ...) start without Sphinx
    from sphinx.application import Sphinx

__version__ = "0.1.0"

FEATURES = (
    "atlas.project",
    "atlas.assets",
    "atlas.upstream",
    "atlas.labs",
    "atlas.refs",
    "atlas.latex",
    "atlas.teach",
)


def setup(app: Sphinx) -> dict[str, Any]:
    for feature in FEATURES:
        app.setup_extension(feature)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
