"""What a build remembers about labs: each page's labs, their results, the "Labs" pages.

Kept per page, like every feature's build state (:mod:`atlas.project.envstate`): the collector
forgets a page that is re-read or removed and merges what ``-j`` readers found. Results are
written by the main process at ``env-updated`` (:mod:`atlas.labs.execute`) and pickled with the
environment, so an unchanged page keeps its results without running again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from atlas.labs.directive import lab_node
from atlas.labs.model import LabSpec, PageResult
from atlas.labs.table import labs_report_node
from atlas.project.envstate import PageState, StateCollector, state_of


@dataclass
class LabsState(PageState):
    specs: dict[str, list[LabSpec]] = field(default_factory=dict)  # docname -> its labs
    results: dict[str, PageResult] = field(default_factory=dict)  # docname -> what they gave
    reports: set[str] = field(default_factory=set)  # docnames with a labs-report


def labs_state(env: BuildEnvironment) -> LabsState:
    return state_of(env, LabsState)


class LabsCollector(StateCollector):
    """Records each page's labs and "Labs" tables from its doctree (like myst-nb's collector)."""

    state = LabsState

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        state = labs_state(app.env)
        docname = app.env.docname
        found = [node["spec"] for node in doctree.findall(lab_node)]
        if found:
            state.specs[docname] = found
        if any(True for _ in doctree.findall(labs_report_node)):
            state.reports.add(docname)

    def get_outdated_docs(
        self,
        app: Sphinx,
        env: BuildEnvironment,
        added: set[str],
        changed: set[str],
        removed: set[str],
    ) -> list[str]:
        """Re-read the "Labs" pages whenever any page changes (titles, pages added or removed)."""
        return sorted(labs_state(env).reports) if added or changed or removed else []
