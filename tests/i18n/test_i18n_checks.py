"""The translation's checks and tools: what a catalog holds, the completeness check and its
STRICT_ALLOW, jieba required, ``python -m atlas.i18n``, and ``make po`` touching only the
catalogs of changed pages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from i18n_books import REPO, copy_book, env_for, lab_log_for, sphinx

LAB_CODE = ">>> round(sum([0.25, 0.75]), 2)"


def gettext(src: Path, out: Path) -> subprocess.CompletedProcess[str]:
    cmd = ["-b", "gettext", str(src), str(out / "gettext"), "-d", str(out / "doctrees-gettext")]
    return subprocess.run(
        [sys.executable, "-m", "sphinx", *cmd, "-q"],
        capture_output=True,
        text=True,
        env=env_for(out / "lab.log"),
        timeout=300,
    )


def msgids(pot: Path) -> list[str]:
    with pot.open("rb") as handle:
        return [m.id for m in read_po(handle) if m.id]


def test_only_prose_titles_and_lab_titles_are_units(tmp_path: Path) -> None:
    src = copy_book(tmp_path)
    proc = gettext(src, tmp_path / "_build")
    assert proc.returncode == 0, proc.stderr
    found = msgids(tmp_path / "_build/gettext/attention.pot")
    assert found == [
        "Attention",
        "Attention weighs every earlier token by the softmax of its score against the query.",
        "Scores sum to one",  # the lab's title
    ]
    # no lab ran for the catalogs
    assert not (tmp_path / "_build/lab.log").exists()


def mark_complete(src: Path, *pages: str) -> None:
    listed = ", ".join(f'"{page}"' for page in pages)
    (src / "locales/zh_CN/complete.toml").write_text(f"complete = [{listed}]\n")


def test_a_complete_page_with_stale_units_fails_the_strict_build(tmp_path: Path) -> None:
    src = copy_book(tmp_path)
    mark_complete(src, "attention", "pipeline")
    strict = ("-W", "--keep-going", "-D", "atlas_strict_allow=i18n.glossary")
    proc = sphinx(src, tmp_path / "_build", "zh_CN", lab_log_for(tmp_path), *strict)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0
    catalog = src / "locales/zh_CN/LC_MESSAGES/pipeline.po"
    lines = catalog.read_text().splitlines()
    fuzzy = (
        lines.index(
            'msgid "The bubble of a pipeline with 4 stages and 8 micro-batches is 3/11 '
            'of the step."'
        )
        + 1
    )
    missing = lines.index('msgid "A third paragraph that nobody has translated yet."') + 1
    assert (
        f'{catalog}:{fuzzy}: WARNING: a unit of "pipeline", which is marked complete, is fuzzy'
        in log
    )
    where = f"{catalog}:{missing}: WARNING: "
    assert where + 'a unit of "pipeline", which is marked complete, is untranslated' in log
    assert log.count("[i18n.stale]") == 2
    # STRICT_ALLOW tolerates them, as it does other warning types
    allow = ("-W", "--keep-going", "-D", "atlas_strict_allow=i18n.stale,i18n.glossary")
    proc = sphinx(src, tmp_path / "_build", "zh_CN", lab_log_for(tmp_path), *allow)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_chinese_build_stops_without_jieba(tmp_path: Path) -> None:
    src = copy_book(tmp_path)
    hide = (
        "import sys\n"
        "class NoJieba:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'jieba': raise ImportError('hidden')\n"
        "sys.meta_path.insert(0, NoJieba())\n"
        "from sphinx.cmd.build import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    out = tmp_path / "_build"
    args = ["-b", "html", str(src), str(out / "zh"), "-d", str(out / "dt"), "-D", "language=zh_CN"]
    proc = subprocess.run(
        [sys.executable, "-c", hide, *args],
        capture_output=True,
        text=True,
        env=env_for(lab_log_for(tmp_path)),
        timeout=300,
    )
    assert proc.returncode == 2
    assert "search needs jieba, which is not installed" in proc.stderr
    assert "pip install jieba==0.42.1" in proc.stderr
    assert "Traceback" not in proc.stderr


def atlas_i18n(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "atlas.i18n", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**env_for(lab_log_for(cwd)), "PYTHONPATH": str(REPO / "ext")},
        timeout=120,
    )


def test_status_command_lists_each_pages_units(tmp_path: Path) -> None:
    src = copy_book(tmp_path)
    proc = atlas_i18n("status", cwd=src)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()[1:-1]}
    assert rows["attention*"] == ["3", "0", "0"]
    assert rows["pipeline"] == ["2", "1", "1"]
    assert rows["all"] == ["12", "1", "1"]


def test_check_command_reports_at_catalog_lines(tmp_path: Path) -> None:
    src = copy_book(tmp_path)
    proc = atlas_i18n("check", cwd=src)
    assert proc.returncode == 1
    assert proc.stdout.startswith("locales/zh_CN/LC_MESSAGES/pipeline.po:13: WARNING: ")
    assert proc.stdout.rstrip().endswith("[i18n.glossary]")
    # fixed: the rendering of the glossary is used
    catalog = src / "locales/zh_CN/LC_MESSAGES/pipeline.po"
    catalog.write_text(catalog.read_text().replace("管线并行", "流水线并行"))
    assert atlas_i18n("check", cwd=src).returncode == 0


def test_make_po_touches_only_the_catalogs_of_changed_pages(tmp_path: Path) -> None:
    pytest.importorskip("sphinx_intl")
    from sphinx_intl.basic import update

    src = copy_book(tmp_path)
    out = tmp_path / "_build"
    locales = src / "locales"
    assert gettext(src, out).returncode == 0
    update(str(locales), str(out / "gettext"), ("zh_CN",))
    before = {p: p.stat().st_mtime_ns for p in locales.rglob("*.po")}
    page = src / "kv-cache.md"
    page.write_text(page.read_text() + "\nA new paragraph about the KV cache.\n")
    assert gettext(src, out).returncode == 0
    update(str(locales), str(out / "gettext"), ("zh_CN",))
    changed = sorted(p.name for p in before if p.stat().st_mtime_ns != before[p])
    assert changed == ["kv-cache.po"]
    with (locales / "zh_CN/LC_MESSAGES/kv-cache.po").open("rb") as handle:
        catalog = {m.id: m.string for m in read_po(handle) if m.id}
    assert catalog["A new paragraph about the KV cache."] == ""
    assert catalog["KV cache"] == "KV cache"  # the translations already made are kept
