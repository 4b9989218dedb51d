"""The problems' topics are a controlled vocabulary (atlas.teach.topics): the Chinese edition shows
each in Chinese (beside the problem's title, in the bank's list and in its topic filter) while
the English edition and the filter's values stay English, and a topic outside the vocabulary is
an error at the problem's line that names the closest topics and how to add one."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from atlas.i18n.ui_catalogs import catalog_path
from atlas.teach.topics import TOPICS, closest
from babel.messages.pofile import read_po
from tinybook import sphinx_build

LAB = ":::{solution}\nA.\n\n```{lab} L\n>>> 1\n1\n```\n:::\n::::\n\n"


def build(src: Path, language: str) -> tuple[dict[str, str], str]:
    """The book at ``src`` in ``language`` (labs off): its two pages' HTML and the warnings."""
    html, warnings = sphinx_build(
        src, "html", src / f"_build-{language}", atlas_labs_mode="off", language=language
    )
    pages = {
        name: (html / f"{name}.html").read_text(encoding="utf-8")
        for name in ("ch/problems", "bank")
    }
    return pages, warnings


def test_a_topic_is_chinese_in_the_chinese_edition_and_english_in_the_english(
    rootdir: Path, tmp_path: Path
) -> None:
    zh, _ = build(shutil.copytree(rootdir / "test-teach", tmp_path / "zh"), "zh_CN")
    en, _ = build(shutil.copytree(rootdir / "test-teach", tmp_path / "en"), "en")
    assert '<span class="atlas-problem-topic"> (计算)</span>' in zh["ch/problems"]
    assert "(<em>计算</em>)" in zh["bank"]  # the bank's line
    assert '<option value="compute">计算</option>' in zh["bank"]  # the filter: value stays
    assert '"topic": "compute"' in zh["bank"]  # the filter's data keys on the vocabulary's word
    assert "(compute)" not in zh["ch/problems"] and "<em>compute</em>" not in zh["bank"]
    assert '<span class="atlas-problem-topic"> (compute)</span>' in en["ch/problems"]
    assert '<option value="compute">compute</option>' in en["bank"]


def test_an_unknown_topic_is_an_error_at_its_line_naming_the_closest_and_the_fix(
    rootdir: Path, tmp_path: Path
) -> None:
    src = shutil.copytree(rootdir / "test-teach", tmp_path / "book")
    (src / "ch" / "problems.md").write_text(
        "# Problems\n\n"
        "::::{problem} Misspelt\n:label: p-misspelt\n:topic: memroy\n:difficulty: hard\n\nQ.\n\n"
        + LAB,  # the problem at line 3
        encoding="utf-8",
    )
    _, warnings = build(src, "en")
    assert re.search(
        r"problems\.md:3: ERROR: problem \"Misspelt\": :topic: 'memroy' is not a topic of the "
        r"book \(the closest are memory",
        warnings,
    ), warnings
    assert 'N_("memroy"), in TOPICS in ext/atlas/teach/topics.py' in warnings
    assert 'LC_MESSAGES/atlas.po (msgid "memroy"' in warnings
    assert "Traceback" not in warnings


def test_the_vocabulary_has_no_duplicates_and_every_topic_its_chinese() -> None:
    assert len({t.lower() for t in TOPICS}) == len(TOPICS)
    with catalog_path("zh_CN", "atlas").open("rb") as handle:
        chinese = {m.id: m.string for m in read_po(handle) if m.id}
    assert [t for t in TOPICS if not chinese.get(t, "").strip()] == []
    assert closest("KV cache capacity")[0] == "KV-cache capacity"
