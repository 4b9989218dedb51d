"""atlas.upstream: exact upstream code from pinned commits (see the package docstring of atlas).

Modules, one job each: ``registry`` (upstreams from .gitmodules and gitlinks), ``gitstore``
(object reads through one ``cat-file`` pipe), ``spec`` (the citation grammar), ``symbols``
(Python/C/C++/CUDA definitions), ``select`` (selector and option filters, upstream numbering),
``cache`` (snippets_cache), ``lock`` (upstreams.lock), ``resolve`` (one citation, start to
end), ``directive`` (the Sphinx directive and role), ``state`` (what a build remembers per
page), ``permalink`` (GitHub permalinks, built and parsed in one place), ``citations`` (scan
pages without Sphinx), ``check`` (``python -m atlas.upstream check`` and ``lock``), ``fetch``
(``python -m atlas.upstream fetch``: ``needs``, ``transfer``, ``cli``).
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
    from atlas.upstream import directive as d
    from atlas.upstream.config import UpstreamConfig
    from atlas.upstream.state import UpstreamCollector

    UpstreamConfig.register(app)
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
