"""The bump shared by git and package upstreams (:mod:`atlas.upstream.drift.bump`), the package
pin (:mod:`atlas.upstream.drift.package_pin`) and the drift statuses, on plain data: a book
folder, hand-made plans and files held in memory (the end-to-end runs are in test_drift.py and
test_upstream_packages.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from atlas.upstream.drift import DriftStatus, Plan, Record, table
from atlas.upstream.drift.bump import apply, refresh_lock
from atlas.upstream.drift.model import STATUSES, DriftError
from atlas.upstream.drift.package_pin import PackagePin, set_pin
from atlas.upstream.lock import LockEntry, load_lock, lock_key, save_lock, text_hash
from atlas.upstream.packages.files import FileSet, record_digest
from atlas.upstream.packages.registry import load_packages

NAME = "fakepkg"
PYPROJECT = f"""\
[project]
name = "fixture-book"
version = "0"
dependencies = ["{NAME}==1.0.0", "other>=1"]

[tool.atlas.upstream-packages.{NAME}]
repository = "https://github.com/fixture/{NAME}"
"""
OLD_TEXT = "a = 1\nb = 2\nc = 3\n"
NEW_TEXT = "import os\n\na = 1\nb = 2\nc = 3\n"  # two lines above: 2-3 is now 4-5
CITED = f"{NAME} {NAME}/core.py:2-3"
# One citation carried (its code moved), one left behind at the old version (its lines read
# the same: the plan says it changed, as a plan made before an edit of the wheel would). Both
# read the same lock entry at 1.0.0.
PAGE = f"# P\n\n```{{upstream}} {CITED}\n```\n\n{{upstream}}`{CITED}`\n"


class MemoryFiles(FileSet):
    """A version's files held in memory, with the RECORD hashes a wheel would give them."""

    def __init__(self, version: str, files: dict[str, bytes]) -> None:
        self.name, self.version, self.where = NAME, version, "memory"
        self.files = files
        self.hashes = {path: record_digest(data) for path, data in files.items()}

    def _bytes(self, path: str) -> bytes:
        return self.files[path]


@pytest.fixture
def book(tmp_path: Path) -> Path:
    (tmp_path / "source").mkdir()
    (tmp_path / "source/page.md").write_text(PAGE, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return tmp_path


def package_plan(book: Path, left_behind: DriftStatus = DriftStatus.CHANGED) -> Plan:
    up = load_packages(book)[NAME]
    blob = record_digest(NEW_TEXT.encode())
    carried = Record(
        "source/page.md",
        3,
        "directive",
        CITED,
        f"{NAME} {NAME}/core.py:4-5",
        DriftStatus.MOVED,
        new_path=f"{NAME}/core.py",
        new_blob=blob,
        linemap={2: 4, 3: 5},
    )
    behind = Record(
        "source/page.md", 6, "role", CITED, f"{NAME}@1.0.0 {NAME}/core.py:2-3", left_behind
    )
    return Plan(up, "1.0.0", "1.1.0", [carried, behind], [])


OLD_KEY = lock_key(NAME, "1.0.0", f"{NAME}/core.py", "2-3")
NEW_KEY = lock_key(NAME, "1.1.0", f"{NAME}/core.py", "4-5")
DIGEST = text_hash("b = 2\nc = 3")


@pytest.mark.parametrize("left_behind", [DriftStatus.CHANGED, DriftStatus.GONE])
def test_a_package_bump_keeps_the_old_entry_a_citation_left_behind_still_reads(
    book, left_behind
) -> None:
    save_lock(book, {OLD_KEY: LockEntry(record_digest(OLD_TEXT.encode()), DIGEST)})
    the_plan = package_plan(book, left_behind)
    new_files = MemoryFiles("1.1.0", {f"{NAME}/core.py": NEW_TEXT.encode()})
    result = apply(book, the_plan, PackagePin(book, the_plan, new_files))
    assert result == {"pages": ["source/page.md"], "lock_moved": 1, "lock_unknown": 0}
    page = (book / "source/page.md").read_text(encoding="utf-8")
    assert f"```{{upstream}} {NAME} {NAME}/core.py:4-5\n" in page
    assert f"{{upstream}}`{NAME}@1.0.0 {NAME}/core.py:2-3`" in page
    lock = load_lock(book)
    assert lock[NEW_KEY] == LockEntry(record_digest(NEW_TEXT.encode()), DIGEST)
    assert OLD_KEY in lock  # the role still reads 1.0.0: its entry stays (dropped before)
    assert f'"{NAME}==1.1.0"' in (book / "pyproject.toml").read_text(encoding="utf-8")


def test_an_old_entry_no_citation_reads_is_dropped(book) -> None:
    save_lock(book, {OLD_KEY: LockEntry("sha256=x", DIGEST)})
    the_plan = package_plan(book)
    carried = the_plan.records[0]
    the_plan.records[1] = Record(
        "source/page.md",
        6,
        "role",
        CITED,
        carried.new,
        DriftStatus.MOVED,
        new_path=carried.new_path,
        new_blob=carried.new_blob,
    )  # both carried now
    sites = {(s.page, s.line, s.raw.strip()): s for s in _sites(book)}
    pin = PackagePin(book, the_plan, MemoryFiles("1.1.0", {}))
    assert refresh_lock(book, the_plan, sites, pin.new_file) == (2, 0)
    assert set(load_lock(book)) == {NEW_KEY}


def test_a_bump_to_the_pinned_version_keeps_its_entries(book) -> None:
    entry = LockEntry(record_digest(OLD_TEXT.encode()), DIGEST)
    save_lock(book, {OLD_KEY: entry})
    up = load_packages(book)[NAME]
    same = Record(
        "source/page.md",
        3,
        "directive",
        CITED,
        CITED,
        DriftStatus.UNCHANGED,
        new_path=f"{NAME}/core.py",
        new_blob=entry.blob,
    )
    the_plan = Plan(up, "1.0.0", "1.0.0", [same], [])
    sites = {(s.page, s.line, s.raw.strip()): s for s in _sites(book)}
    files = MemoryFiles("1.0.0", {f"{NAME}/core.py": OLD_TEXT.encode()})
    assert refresh_lock(book, the_plan, sites, PackagePin(book, the_plan, files).new_file) == (1, 0)
    assert load_lock(book) == {OLD_KEY: entry}  # the package copy used to drop it


def test_an_entry_the_lock_never_had_is_selected_afresh_or_counted_unknown(book) -> None:
    save_lock(book, {})
    the_plan = package_plan(book)
    sites = {(s.page, s.line, s.raw.strip()): s for s in _sites(book)}
    new_files = MemoryFiles("1.1.0", {f"{NAME}/core.py": NEW_TEXT.encode()})
    pin = PackagePin(book, the_plan, new_files)
    assert refresh_lock(book, the_plan, sites, pin.new_file) == (1, 0)
    assert load_lock(book)[NEW_KEY].sha256 == DIGEST
    save_lock(book, {})
    assert refresh_lock(book, the_plan, sites, lambda record: None) == (0, 1)
    assert load_lock(book) == {}


def test_no_lock_file_nothing_to_refresh(book) -> None:
    the_plan = package_plan(book)
    assert refresh_lock(book, the_plan, {}, lambda record: None) == (0, 0)
    assert not (book / "upstreams.lock").exists()


def test_a_pin_that_cannot_be_moved_stops_the_bump_before_any_page(book) -> None:
    (book / "pyproject.toml").write_text(
        PYPROJECT.replace(f'"{NAME}==1.0.0"', f'"{NAME}==1.0.0", "{NAME} == 1.0.0"'),
        encoding="utf-8",
    )
    the_plan = package_plan(book)
    pin = PackagePin(book, the_plan, MemoryFiles("1.1.0", {}))
    with pytest.raises(DriftError, match=r'expected one dependency "fakepkg==1.0.0", found 2'):
        apply(book, the_plan, pin)
    assert (book / "source/page.md").read_text(encoding="utf-8") == PAGE


def test_a_page_edited_since_the_plan_stops_the_bump(book) -> None:
    the_plan = package_plan(book)
    (book / "source/page.md").write_text(PAGE.replace("2-3`", "2-4`"), encoding="utf-8")
    with pytest.raises(DriftError, match=r"^source/page.md:6 changed since the plan was made"):
        apply(book, the_plan, PackagePin(book, the_plan, MemoryFiles("1.1.0", {})))


def test_set_pin_rewrites_exactly_the_one_requirement(book) -> None:
    up = load_packages(book)[NAME]
    set_pin(book, up, "1.1.0", write=False)
    assert (book / "pyproject.toml").read_text(encoding="utf-8") == PYPROJECT
    set_pin(book, up, "1.1.0")
    assert (book / "pyproject.toml").read_text(encoding="utf-8") == PYPROJECT.replace(
        f'"{NAME}==1.0.0"', f'"{NAME}==1.1.0"'
    )
    with pytest.raises(DriftError, match="found 0; edit the pin by hand"):
        set_pin(book, up, "1.2.0")  # up still says 1.0.0: the file no longer does


def test_drift_statuses_print_as_their_text() -> None:
    assert [str(s) for s in STATUSES] == ["unchanged", "moved", "changed", "gone"]
    assert [s.carried for s in STATUSES] == [True, True, False, False]
    rec = Record("p.md", 1, "role", "x a.py", "x a.py", DriftStatus.MOVED, "lines 1-2 -> 3-4")
    assert rec.carried and f"{rec.status:<9}|" == "moved    |"
    assert json.dumps(rec.to_json()) == (
        '{"page": "p.md", "line": 1, "kind": "role", "old": "x a.py", "new": "x a.py", '
        '"status": "moved", "detail": "lines 1-2 -> 3-4"}'
    )
    assert type(rec.to_json()["status"]) is str
    assert DriftStatus("gone") is DriftStatus.GONE


def test_the_table_of_a_package_plan(book) -> None:
    assert table(package_plan(book)) == (
        "fakepkg: 1.0.0 -> 1.1.0\n"
        f"  moved     source/page.md:3  {CITED}  ->  {NAME} {NAME}/core.py:4-5\n"
        f"  changed   source/page.md:6  {CITED}  ->  {NAME}@1.0.0 {NAME}/core.py:2-3\n"
        "summary: 0 unchanged, 1 moved, 1 changed, 0 gone"
    )


def _sites(book: Path):
    from atlas.upstream.citations import scan_book

    return scan_book(book)
