"""atlas.project: the book as a project that says the truth about itself.

- :mod:`atlas.project.stable`: the configuration pickled with the environment is the one the
  next build compares with, so a no-op ``make html`` reads and writes nothing.
- :mod:`atlas.project.ledger`: a page's warnings are reported by every build, so a strict build
  needs no re-read to be strict and ``make html`` and ``make check`` share one environment.
- :mod:`atlas.project.strict`: ``atlas_strict_allow``, what a strict build tolerates, without
  changing what Sphinx reads (``suppress_warnings`` does).
- :mod:`atlas.project.config`: every ``atlas_*`` setting checked in one place, by the rules of
  each feature's settings dataclass (:mod:`atlas.settings`);
  :mod:`atlas.project.files`: the lock, ``.gitmodules`` and gitlinks, the ``.bib`` files, the
  assets; :mod:`atlas.project.errors`: one clean error each (file, line, what, fix; exit 2).
- :mod:`atlas.project.vanished`: what a removed or renamed page leaves behind: every link to it
  is an error in every build, and its HTML and ``_labs`` file are deleted.
- :mod:`atlas.project.envstate`: build state kept one way for every feature (a typed
  ``PageState`` on the environment, kept by a ``StateCollector`` across ``-j`` and incremental
  builds).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.project import config, files, ledger, stable, strict, vanished

    config.ProjectConfig.register(app)
    # Broken project files and settings stop the build with one clean error each (exit 2),
    # before anything reads them.
    app.connect("config-inited", config.check_settings, priority=1)
    app.connect("config-inited", files.check_project_files, priority=2)
    app.connect("builder-inited", files.check_assets, priority=999)
    app.connect("config-inited", strict.install, priority=900)
    app.connect("config-inited", stable.snapshot, priority=999)
    app.connect("env-get-updated", stable.before_pickle, priority=999)
    app.connect("env-check-consistency", stable.restore, priority=0)
    app.connect("write-started", stable.restore, priority=0)
    app.connect("build-finished", stable.forget, priority=0)
    app.add_env_collector(vanished.DocLinksCollector)
    app.connect("env-get-outdated", vanished.outdated_linkers)
    app.connect("env-check-consistency", vanished.check_links)
    app.connect("warn-missing-reference", vanished.already_reported)
    app.connect("build-finished", vanished.remove_outputs)
    ledger.install(app)
    config.check_overrides(app)  # now, before the other features read or convert them
    # env_version: bump when vanished.DocLinksState changes shape.
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
