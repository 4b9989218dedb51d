"""CONTRIBUTING.md's table of pins says what the gitlinks and .gitmodules say: a bump that
forgets the table fails here, with the row to write."""

from __future__ import annotations

import re
from pathlib import Path

from atlas.upstream.registry import load_registry

REPO = Path(__file__).resolve().parents[2]
ROW = re.compile(
    r"^\| (?P<name>[\w.-]+) \| (?P<repo>[\w.-]+/[\w.-]+) \| "
    r"(?P<pin>[0-9a-f]{8})(?P<link> \(link only\))? \|$"
)


def table_rows() -> dict[str, tuple[str, str, bool]]:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index("Pins of the book")
    rows = {}
    for line in text[start:].splitlines()[1:]:
        if line.startswith("| ") and (m := ROW.match(line)):
            rows[m["name"]] = (m["repo"], m["pin"], bool(m["link"]))
        elif rows and not line.startswith("|"):
            break
    return rows


def test_the_pins_table_matches_the_registry() -> None:
    rows = table_rows()
    expected = {}
    for name, up in load_registry(REPO).items():
        pin = up.pin or up.link_only_pin or ""
        expected[name] = (up.github_slug, pin[:8], up.pin is None)
    wrong = {
        name: f"| {name} | {slug} | {pin}{' (link only)' if link else ''} |"
        for name, (slug, pin, link) in expected.items()
        if rows.get(name) != (slug, pin, link)
    }
    assert not wrong, "CONTRIBUTING.md's pins table should read:\n" + "\n".join(wrong.values())
    assert set(rows) == set(expected), (
        f"rows for upstreams that are not registered: {set(rows) - set(expected)}"
    )
