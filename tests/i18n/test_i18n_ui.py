"""The interface's own words in the Chinese edition (atlas.ui): every word of the code has its
translation, and a translated problem keeps its number and topic (Sphinx's Locale transform
replaced the whole title, number included, before ProblemHeadings)."""

from __future__ import annotations

import shutil
from io import StringIO
from pathlib import Path

from atlas.i18n.ui_catalogs import catalog_path
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po
from sphinx.testing.util import SphinxTestApp

EXT = Path(__file__).resolve().parents[2] / "ext" / "atlas"


def words_in_the_code() -> set[str]:
    found = extract_from_dir(
        str(EXT), method_map=[("**.py", "python")], keywords={"_": None, "N_": None}
    )
    return {message for _file, _line, message, _comments, _context in found}


def test_every_word_of_the_interface_has_its_chinese_and_none_is_left_over() -> None:
    with catalog_path("zh_CN", "atlas").open("rb") as handle:
        catalog = read_po(handle)
    translated = {m.id: m.string for m in catalog if m.id}
    code = words_in_the_code()
    assert code, "extraction found no words: are _ and N_ still the keywords?"
    assert sorted(code - translated.keys()) == [], "add these to atlas.po with their Chinese"
    assert sorted(translated.keys() - code) == [], "these are no longer in the code"
    assert [w for w, zh in translated.items() if not zh.strip()] == []
    assert "{number}" in translated["Problem {number}: "]  # a placeholder survives translation


def build(src: Path, language: str) -> dict[str, str]:
    app = SphinxTestApp(
        "html",
        srcdir=src,
        builddir=src / f"_build-{language}",
        confoverrides={
            "atlas_labs_mode": "off",
            "language": language,
            "locale_dirs": [str(src / "locales")],
            "gettext_compact": False,  # one catalog per page, as the book has
        },
        status=StringIO(),
        warning=StringIO(),
    )
    try:
        app.build()
    finally:
        app.cleanup()
    html = src / f"_build-{language}" / "html"
    return {
        name: (html / f"{name}.html").read_text(encoding="utf-8")
        for name in ("ch/problems", "bank")
    }


def test_a_translated_problem_keeps_its_number_and_topic(rootdir: Path, tmp_path: Path) -> None:
    src = shutil.copytree(rootdir / "test-teach", tmp_path / "book")
    catalog = Catalog(locale="zh_CN")
    catalog.add("Twice twenty-one", "二十一的两倍")
    po = src / "locales" / "zh_CN" / "LC_MESSAGES" / "ch" / "problems.po"
    po.parent.mkdir(parents=True)
    with po.open("wb") as handle:
        write_po(handle, catalog)
    zh, en = build(src, "zh_CN"), build(src, "en")
    assert "习题 1：二十一的两倍" in zh["ch/problems"]
    assert '<span class="atlas-problem-topic"> (计算)</span>' in zh["ch/problems"]
    assert "习题 2：A wrong answer" in zh["ch/problems"]  # untranslated: English, numbered
    assert "二十一的两倍" in zh["bank"] and "共 2 道习题" in zh["bank"]
    assert "实验：" in zh["ch/problems"] and "Lab: " not in zh["ch/problems"]
    assert "回到顶部" in zh["ch/problems"]  # furo's words, from our sphinx.po
    # the English edition is untouched by either catalog
    assert "Problem 1: Twice twenty-one" in en["ch/problems"]
    assert "Lab: " in en["ch/problems"] and "Back to top" in en["ch/problems"]
    assert "2 problems in 1 chapter." in en["bank"] or "2 problems in" in en["bank"]
