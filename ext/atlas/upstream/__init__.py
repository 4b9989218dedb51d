"""atlas.upstream: exact upstream code from pinned commits (see the package docstring of atlas).

Modules, one job each: ``registry`` (upstreams from .gitmodules and gitlinks), ``gitstore``
(object reads through one ``cat-file`` pipe), ``spec`` (the citation grammar), ``symbols``
(Python/C/C++/CUDA definitions), ``select`` (selector and option filters, upstream numbering),
``cache`` (snippets_cache), ``lock`` (upstreams.lock), ``resolve`` (one citation, start to
end), ``directive`` (the Sphinx directive and role), ``state`` (what a build remembers per
page), ``permalink`` (GitHub permalinks, built and parsed in one place), ``citations`` (scan
pages without Sphinx), ``check`` (``python -m atlas.upstream check`` and ``lock``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # python -m atlas.upstream ... starts without importing Sphinx
    from sphinx.application import Sphinx
    from sphinx.config import Config

STATIC = Path(__file__).resolve().parent / "static"


def _config_inited(app: Sphinx, config: Config) -> None:
    # atlas_upstream_lock and the other settings are checked by atlas.project.config
    if str(STATIC) not in [str(p) for p in config.html_static_path]:
        config.html_static_path.append(str(STATIC))


def _builder_inited(app: Sphinx) -> None:
    from atlas.upstream.directive import make_resolver

    make_resolver(app)


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.upstream import directive as d
    from atlas.upstream.gitstore import close_all
    from atlas.upstream.state import UpstreamCollector

    # Folder of extra object stores (NAME.git), searched first; $ATLAS_UPSTREAMS_ROOT if unset.
    app.add_config_value("atlas_upstreams_root", None, "env", types=(str, type(None)))
    # The book's git repository (registry, lock, cache); default: the folder of conf.py.
    app.add_config_value("atlas_book_root", None, "env", types=(str, type(None)))
    app.add_config_value("atlas_snippets_cache", None, "env", types=(str, type(None)))
    # Whole-file citations longer than this are refused (cite a range or a symbol instead).
    app.add_config_value("atlas_upstream_max_lines", 400, "env", types=(int,))
    # "update": a build with objects records new citations in upstreams.lock; "frozen": a
    # citation without a lock entry is an error (release builds).
    # Not "env": `make check` after `make html` re-reads nothing; lockcheck compares the lock
    # with every citation of the environment at the end of each build.
    app.add_config_value("atlas_upstream_lock", "update", "", types=(str,))
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
