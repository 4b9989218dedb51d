"""The registry's figures live in packages too (``registry/models/<family>.py``): the check that
every ``cite:KEY`` source names a bibliography entry must read them all."""

from __future__ import annotations

from pathlib import Path

from atlas.refs.registry_cites import registry_cites, unknown_cites

BOOK_REGISTRY = Path(__file__).resolve().parents[2] / "ext" / "atlas" / "labkit" / "registry"


def test_cites_in_a_family_module_are_read(tmp_path: Path) -> None:
    """Before: registry.glob("*.py") saw only the top level, so a figure in models/ with an
    unknown key passed the build."""
    (tmp_path / "models").mkdir()
    (tmp_path / "hardware.py").write_text('SOURCE = "cite:known2024 (Table 1)"\n')
    (tmp_path / "models" / "deepseek.py").write_text('REF = "cite:unknown2099"\n')
    assert [c.key for c in unknown_cites(tmp_path, {"known2024"})] == ["unknown2099"]


def test_the_books_family_modules_are_among_the_files_read() -> None:
    files = {c.path.relative_to(BOOK_REGISTRY).as_posix() for c in registry_cites(BOOK_REGISTRY)}
    assert "models/deepseek.py" in files and "hardware.py" in files
