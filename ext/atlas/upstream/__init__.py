"""atlas.upstream: exact upstream code from pinned commits. Quoting code itself (the
citation's grammar, selectors, symbols, blocks, permalinks) is :mod:`atlas.code`'s; git is
:mod:`atlas.git`'s; the book's paths are :class:`atlas.bookroot.BookPaths`.

- the registry: ``registry`` (git upstreams, from ``.gitmodules`` and the gitlinks),
  ``packages/`` (package upstreams, quoted from the installed wheel's verified files),
  ``config``;
- one citation: ``resolve`` (start to end, for the directive, ``check`` and ``lock`` alike),
  ``cache`` (``snippets_cache/``);
- in a build: ``directive`` (the directive and role), ``state``, ``lockcheck`` (the frozen lock
  against every citation), ``labpaths`` (the files labs read at the pin);
- the lock and the commands: ``lock`` (also what the book knows of an upstream's commits
  without its objects, and the lock file's own check), ``citations`` (the pages scanned without
  Sphinx), ``check`` (``check`` and ``lock``), ``fetch/``, ``partialclone`` (bare partial clones
  and transfers into them);
- moving a pin: ``drift/`` (git and package upstreams), ``linemap`` and ``pagewriter`` (line
  numbers carried, pages rewritten).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # python -m atlas.upstream ... starts without importing Sphinx
    from sphinx.application import Sphinx
    from sphinx.config import Config

STATIC = Path(__file__).resolve().parent / "static"


def _config_inited(app: Sphinx, config: Config) -> None:
    # the settings (atlas.upstream.config) are checked by atlas.project.config
    if str(STATIC) not in [str(p) for p in config.html_static_path]:
        config.html_static_path.append(str(STATIC))


def _builder_inited(app: Sphinx) -> None:
    from atlas.upstream.directive import make_resolver

    make_resolver(app)


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.git.store import close_all
    from atlas.project.registry import add_check, add_settings
    from atlas.upstream import directive as d
    from atlas.upstream.config import UpstreamConfig
    from atlas.upstream.lock import check_lock_file
    from atlas.upstream.state import UpstreamCollector

    add_settings(app, UpstreamConfig)
    add_check(app, check_lock_file, order=10)  # before anything reads the lock
    app.add_directive("upstream", d.UpstreamDirective)
    app.add_role("upstream", d.UpstreamRole())
    app.add_css_file("atlas-upstream.css")
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.add_env_collector(UpstreamCollector)
    app.connect("build-finished", d.build_finished)
    app.connect("build-finished", lambda app, exc: close_all(), priority=900)
    # env_version: bump when UpstreamState changes shape (Sphinx then re-reads every page).
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 3}
