"""atlas.project: the book as a project that says the truth about itself. It imports no
feature: each hands over its settings and its checks of project files at setup (``registry``).

- ``stable``: the configuration pickled with the environment is the one the next build
  compares with, so a no-op ``make html`` reads and writes nothing;
- ``ledger``: every build repeats the warnings of pages it does not read, so ``make html`` and
  ``make check`` share one environment;
- ``strict``: ``atlas_strict_allow``, without changing what Sphinx reads (``suppress_warnings``
  does);
- ``config``: every ``atlas_*`` setting checked once, by its dataclass's rules; ``files``: the
  project files' checks run (``.gitmodules`` and static folders its own); ``errors``: one clean
  error each (file, line, what, fix; exit 2);
- ``vanished``: what a removed or renamed page leaves behind: every link to it is an error
  in every build, and its HTML and ``_labs`` file are deleted;
- ``envstate``: build state kept one way for every feature (a typed ``PageState``);
- ``order``: the book's reading order, from its toctrees (the problem index, the labs table);
- ``repository``: the repository's address (one setting) and every address made from it;
  ``checkout``: where the book sits in it and the commit being built, for the links out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.project import config, files, ledger, stable, strict, vanished
    from atlas.project.registry import add_settings

    add_settings(app, config.ProjectConfig)
    files.add_own_checks(app)
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
    # env_version: bump when vanished.DocLinksState changes shape.
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
