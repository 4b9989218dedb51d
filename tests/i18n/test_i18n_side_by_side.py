"""``make html`` builds the two editions side by side: each lab still runs once, whichever
edition reaches it first, and the other finds its result in the shared cache."""

from __future__ import annotations

from pathlib import Path

from i18n_books import build_side_by_side, copy_book


def test_two_editions_built_at_once_run_each_lab_once(tmp_path: Path) -> None:
    built = build_side_by_side(copy_book(tmp_path), tmp_path / "_build")
    assert built.codes == {"en": 0, "zh_CN": 0}, built.logs
    assert built.lab_log.read_text().splitlines() == ["ran"]
    assert "passed" in built.page("attention") and "passed" in built.page("attention", "zh_CN")
