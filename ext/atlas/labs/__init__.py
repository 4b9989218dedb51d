"""atlas.labs: the ``lab`` directive, its forked runner, the result cache, the labs page.

Flow: the directive records each lab at read time (in whatever process reads the page, ``-j``
included); an environment collector merges them; at ``env-updated`` Sphinx's main process runs
the pages whose results are neither in the environment nor in the cache, in workers forked from
a zygote that imported torch once; ``doctree-resolved`` renders the results. Sphinx's own process
never imports torch.

Where each job lives:

- ``model``: what a lab is and what running it gave (``LabStatus``, the JSON codec, the lookup
  from a lab to its result); ``directive``: the ``lab`` directive (read time);
- ``execute``: which pages to run, in which mode, with the cache (``cache``, keyed through
  ``imports``), at ``env-updated``;
- ``runner`` (Sphinx side), ``zygote`` and ``worker`` (lab processes), talking through
  ``protocol``; what they share with ``atlas.labkit`` lives in :mod:`atlas.processes`;
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
from sphinx.environment.collectors import EnvironmentCollector

from atlas.labs import execute
from atlas.labs.config import LabsConfig
from atlas.labs.directive import LabDirective, lab_node
from atlas.labs.model import LabSpec, PageResult
from atlas.labs.render import render_page
from atlas.labs.table import LabsReportDirective, build_table, labs_report_node

MODES = ("auto", "force", "off")
STATIC = Path(__file__).resolve().parent / "static"


def _store(
    env: BuildEnvironment,
) -> tuple[dict[str, list[LabSpec]], dict[str, PageResult], set[str]]:
    """The labs' data on the environment (pickled with it): specs, results, report pages."""
    if not hasattr(env, "atlas_labs"):
        env.atlas_labs = {}  # docname -> list[LabSpec]
        env.atlas_lab_results = {}  # docname -> PageResult
        env.atlas_labs_reports = set()  # docnames with a labs-report
    return env.atlas_labs, env.atlas_lab_results, env.atlas_labs_reports


class LabsCollector(EnvironmentCollector):
    """Collects each page's labs; merges what parallel readers found (like myst-nb's)."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        specs, results, reports = _store(env)
        specs.pop(docname, None)
        results.pop(docname, None)
        reports.discard(docname)

    def merge_other(
        self, app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment
    ) -> None:
        specs, results, reports = _store(env)
        other_specs, other_results, other_reports = _store(other)
        for docname in docnames:
            if docname in other_specs:
                specs[docname] = other_specs[docname]
            if docname in other_results:
                results[docname] = other_results[docname]
            if docname in other_reports:
                reports.add(docname)

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        specs, _, reports = _store(app.env)
        docname = app.env.docname
        found = [node["spec"] for node in doctree.findall(lab_node)]
        if found:
            specs[docname] = found
        if any(True for _ in doctree.findall(labs_report_node)):
            reports.add(docname)


def _add_static(app: Sphinx, config: Config) -> None:
    # At config-inited, so that the pickled config and the new one agree (no spurious rebuild).
    if str(STATIC) not in config.html_static_path:
        config.html_static_path.append(str(STATIC))


def _on_env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    specs, results, reports = _store(env)
    return execute.run_labs(app, specs, results, reports)


def _on_env_get_outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Re-read the labs page whenever any page changes (titles, pages added or removed)."""
    _, _, reports = _store(env)
    return sorted(reports) if added or changed or removed else []


def _on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    specs, results, _ = _store(app.env)
    show_time = LabsConfig.of(app).show_times
    render_page(doctree, results, show_time)
    for node in list(doctree.findall(labs_report_node)):
        titles = {name: app.env.titles[name].astext() for name in specs if name in app.env.titles}
        node.replace_self(build_table(app, docname, specs, results, titles, show_time))


def setup(app: Sphinx) -> dict[str, Any]:
    LabsConfig.register(app)
    app.add_node(lab_node)
    app.add_node(labs_report_node)
    app.add_directive("lab", LabDirective)
    app.add_directive("labs-report", LabsReportDirective)
    app.add_env_collector(LabsCollector)
    # the settings (atlas.labs.config) are checked by atlas.project.config
    app.connect("config-inited", _add_static)
    app.add_css_file("atlas-labs.css")
    app.connect("env-get-outdated", _on_env_get_outdated)
    app.connect("env-before-read-docs", execute.prestart)
    app.connect("build-finished", execute.stop_prestarted)
    app.connect("build-finished", execute.fail_build)
    app.connect("env-updated", _on_env_updated)
    app.connect("doctree-resolved", _on_doctree_resolved)
    # env_version: bump when LabSpec or PageResult change shape, so that Sphinx re-reads
    # instead of unpickling old objects from the environment (2: statuses became LabStatus).
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
