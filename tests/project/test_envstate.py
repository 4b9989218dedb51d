"""Build state kept one way (atlas.project.envstate): per-page fields are forgotten with their
page and merged from parallel readers; book-wide fields are left to the main process; each
feature's state lives on the environment under one typed key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from atlas.project.envstate import STORE, PageState, state_of
from atlas.refs.state import RefsState
from atlas.teach.problems import ProblemsState
from atlas.teach.state import TeachState
from atlas.upstream.directive import _page_lines
from atlas.upstream.state import UpstreamState


@dataclass
class Demo(PageState):
    errors: dict[str, list[int]] = field(default_factory=dict)
    pages_with_placeholders: set[str] = field(default_factory=set)
    digest: str | None = None  # book-wide


def test_forget_drops_the_page_from_every_per_page_field_only() -> None:
    state = Demo({"a": [1], "b": [2]}, {"a", "b"}, "d1")
    state.forget("a")
    assert state == Demo({"b": [2]}, {"b"}, "d1")
    state.forget("never-read")  # a page Sphinx purges before its first read
    assert state == Demo({"b": [2]}, {"b"}, "d1")


def test_merge_takes_only_the_pages_the_other_reader_read() -> None:
    mine = Demo({"a": [1], "b": [2]}, {"a"}, "mine")
    # a -j reader starts from a copy of the main environment: it still holds "b" (stale for
    # this merge) and read "c" and "d"
    theirs = Demo({"b": [99], "c": [3]}, {"b", "c", "d"}, "theirs")
    mine.merge(theirs, {"c", "d"})
    assert mine == Demo({"a": [1], "b": [2], "c": [3]}, {"a", "c", "d"}, "mine")


def test_pages_lists_every_page_with_something_recorded() -> None:
    assert Demo({"a": [1]}, {"b"}).pages() == {"a", "b"}
    assert Demo().pages() == set()


def test_state_of_makes_one_typed_state_per_kind_and_keeps_it() -> None:
    env = SimpleNamespace()
    first = state_of(env, Demo)
    first.errors["a"] = [1]
    assert state_of(env, Demo) is first
    other = state_of(env, UpstreamState)
    assert isinstance(other, UpstreamState) and other is not first
    assert set(vars(env)) == {STORE}  # one attribute on the environment, whatever the features


def test_feature_states_are_per_page_but_for_their_book_wide_fields() -> None:
    """Each feature's fields are keyed by docname (so forgetting a page forgets it wholly),
    except the ones documented as book-wide."""
    up = UpstreamState(
        errors={"p": [(3, "x")]}, missing={"p"}, pins={"p": {"u": "abc"}},
        new={"p": {"k": ("b", "h")}}, keys={"p": {"k": (3, True)}}, outside="digest",
    )  # fmt: skip
    up.forget("p")
    assert up == UpstreamState(outside="digest")
    teach = TeachState(labcode_errors={"p": [1]}, unshown={"q": [2]})
    assert teach.pages() == {"p", "q"}
    refs = RefsState(chapter_lists={"ch/index"})
    refs.forget("ch/index")
    assert refs == RefsState()
    problems = ProblemsState(problems={"p": []}, indexes={"back"})
    assert problems.pages() == {"p", "back"}


def test_page_lines_are_kept_for_the_page_being_read_only(tmp_path: Path) -> None:
    """The role reads its page's source to find its own line; the lines live in the page's
    temp_data (which Sphinx empties after each page), not in a cache that outlives the build."""
    page = tmp_path / "page.md"
    page.write_text("one\ntwo\n", encoding="utf-8")
    env = SimpleNamespace(temp_data={})
    assert _page_lines(env, str(page)) == ["one", "two"]
    page.write_text("edited\n", encoding="utf-8")
    assert _page_lines(env, str(page)) == ["one", "two"]
    env.temp_data.clear()  # the next page (or the next build reading this one)
    assert _page_lines(env, str(page)) == ["edited"]
    assert _page_lines(env, str(tmp_path / "gone.md")) == []
