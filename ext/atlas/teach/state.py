"""What a build remembers about the teaching pages: the pages whose quotes or labs were wrong.

Kept per page (:mod:`atlas.project.envstate`): forgotten when a page is re-read or removed,
merged under ``-j``. A page with an error is re-read by every build (the file it quotes or the
lab may be fixed since), so an error is reported again rather than going quiet in an
incremental build; a wrong quote fails the build at its end (:func:`fail_on_wrong_quotes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from atlas.project.envstate import PageState, StateCollector, state_of


@dataclass
class TeachState(PageState):
    # docname -> lines of its wrong ``labcode`` quotes and references
    labcode_errors: dict[str, list[int]] = field(default_factory=dict)
    # docname -> lines of lab imports of taught code that the page does not show
    unshown: dict[str, list[int]] = field(default_factory=dict)


def teach_state(env: BuildEnvironment) -> TeachState:
    return state_of(env, TeachState)


@dataclass
class ShownState(PageState):
    """Where taught code is shown and used, kept apart from :class:`TeachState` because it holds
    something for every page with a quote or a lab, not only the pages with errors.

    Whether a page may use taught code it does not show depends on the other pages (is it shown
    before, or in another chapter?), so each page records what it shows and what it uses
    unshown, and the verdict is made once all pages are read (:func:`atlas.teach.taught.judge`).
    """

    # docname -> (labkit path, first line, last line, page line) of each labcode block
    shown: dict[str, list[tuple[str, int, int, int]]] = field(default_factory=dict)
    # docname -> the taught names its labs import and it does not show (atlas.teach.taught.Unshown)
    borrowed: dict[str, list] = field(default_factory=dict)
    # docname -> {(lab title, name): (docname that shows it, page line)}: the lab boxes' links
    links: dict[str, dict[tuple[str, str], tuple[str, int]]] = field(default_factory=dict)


def shown_state(env: BuildEnvironment) -> ShownState:
    return state_of(env, ShownState)


class ShownCollector(StateCollector):
    state = ShownState


class TeachCollector(StateCollector):
    state = TeachState

    def get_outdated_docs(
        self,
        app: Sphinx,
        env: BuildEnvironment,
        added: set[str],
        changed: set[str],
        removed: set[str],
    ) -> list[str]:
        """Re-read pages that had an error: the file they quote or the lab may be fixed since,
        and an error must be reported again rather than go quiet in an incremental build."""
        return sorted((teach_state(env).pages() & set(env.found_docs)) - removed)


def fail_on_wrong_quotes(app: Sphinx, exception: BaseException | None) -> None:
    """A book that quotes wrong code must not publish, even from a build without ``-W``.

    A lab that uses taught code its page does not show is an error too, but only strict builds
    (``make check``, ``-W``) stop on it: a chapter being written still builds to be read.
    """
    if exception is not None or app.env is None:
        return
    if teach_state(app.env).labcode_errors:
        app.statuscode = 1
