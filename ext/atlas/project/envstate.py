"""Build state kept one way: a typed object per feature, on the environment, kept by a collector.

Sphinx pickles the environment between builds and, under ``-j``, reads pages in forked
processes whose environments it merges back. A feature that remembers something per page
(its errors, the lock keys it cited, the pins it read) must therefore do three things right:
forget a page that is re-read or removed, merge what parallel readers found, and survive the
pickle. Spelled ad hoc (``setattr(env, ...)``, ``getattr(env, ..., default)``) each feature
did it its own way and the type checker saw none of it.

Here a feature declares a :class:`PageState` dataclass (every ``dict`` field maps a docname to
what that page produced, every ``set`` field holds docnames), reads it with :func:`state_of`,
and registers a :class:`StateCollector` subclass with ``app.add_env_collector``: forgetting
and merging then follow from the fields. The model is myst-nb's and atlas.labs' collector.
Bump the extension's ``env_version`` when a state's fields change shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, TypeVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector

STORE = "atlas_state"  # the one attribute of the environment: state key -> PageState

S = TypeVar("S", bound="PageState")


@dataclass
class PageState:
    """A feature's build state. ``dict`` fields are keyed by docname and ``set`` fields hold
    docnames: :meth:`forget` and :meth:`merge` handle both. Any other field is book-wide:
    neither forgotten nor merged (the main process owns it)."""

    def forget(self, docname: str) -> None:
        """Drop what ``docname`` produced (it is re-read or was removed)."""
        for value in self._per_page():
            if isinstance(value, dict):
                value.pop(docname, None)
            else:
                value.discard(docname)

    def merge(self, other: PageState, docnames: Iterable[str]) -> None:
        """Take what a parallel reader found for the pages it read (``docnames``)."""
        wanted = set(docnames)
        for mine, theirs in zip(self._per_page(), other._per_page(), strict=True):
            if isinstance(mine, dict):
                mine.update((d, theirs[d]) for d in wanted if d in theirs)
            else:
                mine.update(theirs & wanted)

    def pages(self) -> set[str]:
        """Every docname this state holds something for."""
        found: set[str] = set()
        for value in self._per_page():
            found.update(value)
        return found

    def _per_page(self) -> list[dict[str, Any] | set[str]]:
        values = (getattr(self, f.name) for f in fields(self))
        return [v for v in values if isinstance(v, dict | set)]


def state_of(env: BuildEnvironment, kind: type[S]) -> S:
    """The environment's state of this kind, made empty on first use (pickled with it)."""
    store: dict[str, PageState] = vars(env).setdefault(STORE, {})
    key = f"{kind.__module__}.{kind.__qualname__}"
    found = store.get(key)
    if not isinstance(found, kind):
        found = store[key] = kind()
    return found


class StateCollector(EnvironmentCollector):
    """Keeps one :class:`PageState` right across incremental and ``-j`` builds.

    Subclasses name their state in ``state``; they may add ``process_doc`` (read the doctree)
    and ``get_outdated_docs`` (pages to re-read though unchanged). Directives that record while
    a page is read write into :func:`state_of` directly."""

    state: ClassVar[type[PageState]]

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        state_of(env, self.state).forget(docname)

    def merge_other(
        self, app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment
    ) -> None:
        state_of(env, self.state).merge(state_of(other, self.state), docnames)

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        """Nothing by default: the feature's directives recorded while the page was read."""
