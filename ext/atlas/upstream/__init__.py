"""atlas.upstream: exact upstream code from pinned commits. Quoting code itself (the
citation's grammar, selectors, symbols, blocks, permalinks) is :mod:`atlas.code`'s; git is
:mod:`atlas.git`'s; the book's paths are :class:`atlas.bookroot.BookPaths`.

Where each job lives (git itself is :mod:`atlas.git`'s; the book's paths are
:class:`atlas.bookroot.BookPaths`):

- the registry: ``registry`` (git upstreams: ``.gitmodules`` and the gitlinks; where each one's
  objects are), ``packages/`` (package upstreams pinned in pyproject.toml, quoted from the
  installed wheel's verified files; its docstring maps its modules), ``config`` (the settings);
- one citation: ``resolve`` (start to end, for the directive, ``check`` and ``lock`` alike;
  the grammar, selectors, symbols, blocks and permalinks are :mod:`atlas.code`'s), ``cache``
  (``snippets_cache/``);
- in a build: ``directive`` (the directive and role, with structured attributes on each
  citation), ``state`` (what a build remembers per page, and its collector), ``lockcheck``
  (the frozen lock against every citation), ``labpaths`` (the files labs read at the pin),
  ``behind`` (a citation older than its pin: the ``upstream.behind`` warning, and the reasons
  a page records), ``freshness`` (the back matter's table of pins and what is left behind),
  ``pinsline`` (under each page, the pins its citations were verified at);
- the lock and the commands: ``lock`` (``upstreams.lock``, its keys, and what the book knows of
  an upstream's commits without its objects: ``known_revs``), ``citations`` (the
  pages scanned without Sphinx), ``check`` (``check`` and ``lock``), ``fetch/`` (``needs``:
  what the book needs; ``transfer``: one upstream's fetch; ``cli``), ``partialclone`` (bare
  partial clones and transfers into them);
- moving a pin: ``drift/`` for git and package upstreams (target, trees, wheels, carry,
  suggest, guard, others, plan, package_plan, bump, gitlink, package_pin, report, queue,
  review, labs, cli, package_cli; its docstring maps them), ``linemap`` and ``pagewriter``
  (line numbers carried, pages rewritten).
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
    from atlas.upstream.freshness import FreshnessDirective
    from atlas.upstream.lock import check_lock_file
    from atlas.upstream.pinsline import page_context as pins_line
    from atlas.upstream.state import UpstreamCollector

    add_settings(app, UpstreamConfig)
    add_check(app, check_lock_file, order=10)  # before anything reads the lock
    app.add_directive("upstream", d.UpstreamDirective)
    app.add_role("upstream", d.UpstreamRole())
    app.add_directive("upstream-freshness", FreshnessDirective)
    app.add_css_file("atlas-upstream.css")
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.add_env_collector(UpstreamCollector)
    app.connect("html-page-context", pins_line)
    app.connect("build-finished", d.build_finished)
    app.connect("build-finished", lambda app, exc: close_all(), priority=900)
    # env_version: bump when UpstreamState changes shape (Sphinx then re-reads every page).
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 4}
