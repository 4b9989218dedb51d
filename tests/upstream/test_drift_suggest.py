"""Suggestions on plain strings: the best window by similarity, never an empty or inverted
range, and nothing offered that fails the citation's guard."""

from __future__ import annotations

from atlas.upstream.drift.guard import guard_for
from atlas.upstream.drift.suggest import Candidate, best_window, suggest

OLD = "".join(f"value_{n} = compute({n}, scale={n * 3})\n" for n in range(1, 41))
# the block 10-19 moves down by 25 lines and one of its lines is edited
NEW = "".join(f"header_{n} = {n}\n" for n in range(25)) + OLD.replace(
    "value_14 = compute(14, scale=42)", "value_14 = compute(14, scale=43)"
)


def offer(selector: str, new_text: str | None, options=None, others=()):
    return suggest(
        selector, "m.py", OLD, "m.py" if new_text is not None else None, new_text,
        lambda: iter(others), guard_for("up", options or {}),
    )  # fmt: skip


def test_a_shifted_edited_block_is_found_by_similarity() -> None:
    found = offer("10-19", NEW, {"contains": "value_12 ="})
    assert found is not None and found.selector == "35-44"
    assert 0.8 < found.score < 1.0
    assert found.linemap[10] == 35 and 14 not in found.linemap  # the edited line is not mapped


def test_a_suggestion_that_fails_its_guard_is_not_offered() -> None:
    assert offer("10-19", NEW, {"contains": "scale=42"}) is None
    assert offer("10-19", NEW, {"emphasize-lines": "14"}) is None  # the emphasised line changed
    assert offer("10-19", NEW, {"emphasize-lines": "12"}).selector == "35-44"


def test_never_an_empty_or_inverted_range() -> None:
    short = "".join(f"other_{n}\n" for n in range(5)) + "value_3 = compute(3, scale=9)\n"
    for selector in ("1-40", "3", "38-40", "2-5,30-33"):
        found = offer(selector, short)
        if found is not None:
            for part in found.selector.split(","):
                a, _, b = part.partition("-")
                assert int(a) <= int(b or a)
    assert best_window(["}", ""], "}\n\n}\n") is None  # braces and blanks anchor nothing


def test_code_gone_from_its_file_is_found_in_another() -> None:
    other = Candidate("n.py", NEW)
    found = offer("10-19", "nothing = 1\n", {"contains": "value_12"}, [other])
    assert found is not None and (found.path, found.selector) == ("n.py", "35-44")
    assert "another file" in found.note


def test_two_ranges_land_in_order_or_not_at_all() -> None:
    found = offer("5-8,20-23", NEW)
    assert found is not None and found.selector == "30-33,45-48"
    lines = OLD.splitlines(True)
    swapped = "".join(lines[19:] + lines[:19])
    assert offer("5-8,20-23", swapped) is None  # the second range now comes first: no offer
