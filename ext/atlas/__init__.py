"""The LLM Infra Atlas Sphinx extensions.

One feature per subpackage, each with its own ``setup(app)`` (in the manner of sphinx-design):

- ``atlas.project``: a stable configuration, the warning ledger, what strict builds allow, the
  settings check, and the one way features keep build state (``project.envstate``).
- ``atlas.assets``: MathJax and mermaid served from the build, never a CDN.
- ``atlas.upstream``: the ``upstream`` directive and role, the registry of upstreams (git and
  package), the snippet cache, the lock, ``fetch`` and the drift tools.
- ``atlas.labs``: the ``lab`` directive, its forked runner, the result cache, the labs page.
- ``atlas.refs``: bibliography checks and link checking.
- ``atlas.latex``: the offline PDF.
- ``atlas.teach``: ``labcode`` (our lab code on the page), ``problem``/``solution``, the
  teaching check and the runnable lab files.
- ``atlas.i18n``: the Chinese edition from gettext catalogs: what a unit is, stale units shown
  in English with a banner, the language switch, Chinese search, the glossary and the status.

Shared by the features, with no ``setup`` of their own:

- ``atlas.git``: everything asked of git (the only code that starts it: ``git.process``);
- ``atlas.bookroot``: where the book is (``BookPaths``, from the Sphinx app or a command line)
  and how to name a command that works from where the reader is;
- ``atlas.settings``: the typed settings machinery; each feature's ``atlas_*`` settings are one
  frozen dataclass in its ``config`` module (``atlas.labs.config.LabsConfig``, ...), checked by
  ``atlas.project.config``, read as ``LabsConfig.of(app)``;
- ``atlas.processes``: what the lab runner and labkit's ranks share (dying with the parent,
  seeding, exit-status text), importing neither Sphinx nor torch;
- ``atlas.labkit``: the code labs import (never imported by Sphinx itself).
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
    "atlas.i18n",
)


def setup(app: Sphinx) -> dict[str, Any]:
    for feature in FEATURES:
        app.setup_extension(feature)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
