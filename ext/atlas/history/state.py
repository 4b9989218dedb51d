"""What a build remembers of the book's history (:class:`HistoryState`), and the one place the
history is read for a build (:func:`history_for`).

The history is read once per build, in the main process at ``builder-inited`` (parallel readers
inherit it), and kept on the environment keyed by HEAD: a build of the same commit reads no git
log at all. When HEAD moves, the changelog pages are read again, and so is every page whose last
change (the date its footer shows) is no longer the one it was written with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from atlas.bookroot import BookPaths
from atlas.git.repo import head_and_prefix
from atlas.history.config import HistoryConfig
from atlas.history.events import Day, Layout, days, last_changes
from atlas.history.log import file_at, read_history
from atlas.project.envstate import PageState, StateCollector, state_of


@dataclass(frozen=True)
class LastChange:
    sha: str
    time: int


@dataclass
class HistoryState(PageState):
    # pages holding a changelog directive
    changelogs: set[str] = field(default_factory=set)
    # docname -> the last change its footer was written with (None: never committed)
    written_with: dict[str, LastChange | None] = field(default_factory=dict)
    # book-wide: what was read at HEAD
    head: str | None = None
    read: bool = False  # the fields below were computed at ``head``
    moved: bool = False  # this build found HEAD elsewhere than the pickled environment had it
    available: bool = False
    shallow: bool = False
    why_not: str = ""
    commits: int = 0  # main-line commits
    first: int | None = None  # the oldest main-line commit's time
    days: list[Day] = field(default_factory=list)
    last: dict[str, LastChange] = field(default_factory=dict)  # repository path -> last change
    prefix: str = ""  # the book's folder, from the repository's top ("" or "book/")
    root: str = ""  # the book's root folder (for the registry's addresses)


def history_state(env: BuildEnvironment) -> HistoryState:
    return state_of(env, HistoryState)


def layout(app: Sphinx, prefix: str) -> Layout:
    paths = BookPaths.from_app(app)
    source = paths.source.relative_to(paths.root).as_posix()
    source = "" if source == "." else source + "/"
    listed = HistoryConfig.of(app).translated_file
    return Layout(
        source=prefix + source,
        suffix=".md",
        translated_file=prefix + listed if listed else None,
    )


def history_for(app: Sphinx) -> HistoryState:
    """The state, read afresh if HEAD moved since the environment was pickled; called once a
    build, at builder-inited (``moved`` says whether HEAD moved since the last build)."""
    state = history_state(app.env)
    root = BookPaths.from_app(app).root
    head, prefix = head_and_prefix(root)
    if state.read and state.head == head and head is not None:
        state.moved = False
        return state
    state.moved = state.read and state.head != head
    history = read_history(root)
    state.head, state.prefix, state.read, state.root = head, prefix, True, str(root)
    state.available, state.shallow, state.why_not = (
        history.available,
        history.shallow,
        history.why_not,
    )
    state.commits = len(history.commits)
    state.first = history.commits[-1].time if history.commits else None
    where = layout(app, prefix)
    state.days = days(history, where, lambda rev, path: file_at(root, rev, path))
    every_path = {c.path for commit in history.commits for c in commit.changes}
    state.last = {
        path: LastChange(commit.sha, commit.time)
        for path, commit in last_changes(history, every_path).items()
    }
    return state


def page_paths(app: Sphinx, docname: str) -> list[str]:
    """The repository paths a page's footer date covers: the page, and in a translated edition
    its catalog (``locale_dirs/<language>/LC_MESSAGES/<docname>.po``)."""
    state = history_state(app.env)
    paths = BookPaths.from_app(app)
    suffix = Path(app.env.doc2path(docname)).suffix
    source = paths.source.relative_to(paths.root).as_posix()
    found = [state.prefix + ("" if source == "." else source + "/") + docname + suffix]
    language = app.config.language
    if language and language != "en":
        for folder in app.config.locale_dirs:
            catalog = Path(folder) / language / "LC_MESSAGES" / f"{docname}.po"
            found.append(state.prefix + catalog.as_posix())
    return found


def last_change(app: Sphinx, docname: str) -> LastChange | None:
    """The newest commit that changed the page (or its catalog); None if none did."""
    state = history_state(app.env)
    seen = [state.last[p] for p in page_paths(app, docname) if p in state.last]
    return max(seen, key=lambda c: c.time) if seen else None


class HistoryCollector(StateCollector):
    state = HistoryState

    def process_doc(self, app: Sphinx, doctree: object) -> None:
        history_state(app.env).written_with[app.env.docname] = last_change(app, app.env.docname)

    def get_outdated_docs(
        self,
        app: Sphinx,
        env: BuildEnvironment,
        added: set[str],
        changed: set[str],
        removed: set[str],
    ) -> list[str]:
        """The changelog pages when HEAD moved, and the pages whose last change moved."""
        state = history_state(env)  # read at builder-inited (history_for)
        again = set(state.changelogs) if state.moved else set()
        for docname, written in state.written_with.items():
            if last_change(app, docname) != written:
                again.add(docname)
        return sorted((again & set(env.found_docs)) - removed)
