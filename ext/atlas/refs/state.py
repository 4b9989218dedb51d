"""What a build remembers about reference lists: the pages that hold a ``chapter-references``.

A chapter list names the documents of its folder, so it is re-read when a page joins or leaves
that folder although its own source did not change. Kept per page (merged under ``-j``,
forgotten with the page) by :class:`RefsCollector`, see :mod:`atlas.project.envstate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from atlas.project.envstate import PageState, StateCollector, state_of


@dataclass
class RefsState(PageState):
    chapter_lists: set[str] = field(default_factory=set)  # docnames with a chapter-references


def refs_state(env: BuildEnvironment) -> RefsState:
    return state_of(env, RefsState)


class RefsCollector(StateCollector):
    state = RefsState

    def get_outdated_docs(
        self,
        app: Sphinx,
        env: BuildEnvironment,
        added: set[str],
        changed: set[str],
        removed: set[str],
    ) -> list[str]:
        """Chapter lists whose folder gained or lost a page (their filter lists its pages)."""
        if not (added or removed):
            return []
        folders = {d.rpartition("/")[0] for d in added | removed}
        return sorted(
            doc
            for doc in refs_state(env).chapter_lists
            if doc in env.found_docs and doc.rpartition("/")[0] in folders
        )
