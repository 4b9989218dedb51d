"""atlas.labs: the ``lab`` directive, its forked runner, the result cache, the labs page.

Flow: the directive records each lab at read time (in whatever process reads the page, ``-j``
included); an environment collector merges them; at ``env-updated`` Sphinx's main process runs
the pages whose results are neither in the environment nor in the cache, in workers forked from
a zygote that imported torch once; ``doctree-resolved`` renders the results. Sphinx's own process
never imports torch.

Where each job lives:

- ``config``: the labs' settings (mode, timeout, memory cap, seed, workers, shown times);
- ``model``: what a lab is and what running it gave (``LabStatus``, the JSON codec, the lookup
  from a lab to its result); ``directive``: the ``lab`` directive (read time);
- ``execute``: which pages to run, in which mode, with the cache (``cache``, keyed through
  ``imports``), at ``env-updated``; ``cache``: the results on disk, one file per page key;
- ``runner`` (Sphinx side; ``jobs``: a page's run and the result made from its events),
  ``zygote`` and ``worker`` (lab processes), talking through ``protocol`` (the kinds of message
  and their framing, once); ``sandbox`` (a scratch folder, no write outside it, through
  ``landlock``); what they share with ``atlas.labkit`` lives in :mod:`atlas.processes`;
- ``imports``: what a lab takes from ``atlas.labkit`` (read with ``ast``), and
  ``labkit_root``, the one answer to "which labkit folder" (the cache key, labcode and the
  teaching check share it);
- ``drift``: the labs that read an upstream, listed and run at another commit for
  ``python -m atlas.upstream drift --labs`` (which starts it as a process);
- ``kinds``: a lab is a ``check`` (the default) or a ``model``; a check whose examples assert
  nothing is an error at its line;
- ``state``: what the build remembers (labs, results, "Labs" pages) and its collector;
- ``render``: a lab on its page; ``table``: the "Labs" page; ``junit``: the JUnit report;
  ``log``: progress lines and one error per lab that is not fine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment

from atlas.labs import execute
from atlas.labs.config import LabsConfig
from atlas.labs.directive import LabDirective, LabTitleTransform, lab_node
from atlas.labs.render import render_page
from atlas.labs.state import LabsCollector, labs_state
from atlas.labs.table import LabsReportDirective, build_table, labs_report_node

STATIC = Path(__file__).resolve().parent / "static"


def _add_static(app: Sphinx, config: Config) -> None:
    # At config-inited, so that the pickled config and the new one agree (no spurious rebuild).
    if str(STATIC) not in config.html_static_path:
        config.html_static_path.append(str(STATIC))


def _on_env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    state = labs_state(env)
    return execute.run_labs(app, state.specs, state.results, state.reports)


def _on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    state = labs_state(app.env)
    specs, results = state.specs, state.results
    show_time = LabsConfig.of(app).show_times
    render_page(doctree, results, show_time)
    for node in list(doctree.findall(labs_report_node)):
        wanted = set(specs) | {f"{name.split('/')[0]}/index" for name in specs}
        titles = {name: app.env.titles[name].astext() for name in wanted if name in app.env.titles}
        node.replace_self(build_table(app, docname, specs, results, titles, show_time))


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.project.registry import add_settings

    add_settings(app, LabsConfig)
    app.add_node(lab_node)
    app.add_node(labs_report_node)
    app.add_directive("lab", LabDirective)
    app.add_directive("labs-report", LabsReportDirective)
    app.add_transform(LabTitleTransform)
    app.add_env_collector(LabsCollector)
    # the settings (atlas.labs.config) are checked by atlas.project.config
    app.connect("config-inited", _add_static)
    app.add_css_file("atlas-labs.css")
    app.connect("env-before-read-docs", execute.prestart)
    app.connect("build-finished", execute.stop_prestarted)
    app.connect("build-finished", execute.fail_build)
    app.connect("env-updated", _on_env_updated)
    app.connect("doctree-resolved", _on_doctree_resolved)
    # env_version: bump when LabSpec or PageResult change shape, so that Sphinx re-reads
    # instead of unpickling old objects from the environment (2: statuses became LabStatus;
    # 3: kept as a LabsState of atlas.labs.state; 4: LabSpec has a kind).
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 4}
