"""The Chinese edition of a fixture book: translated units in Chinese, stale ones in English
with the banner, the switch both ways, ``lang``, the Chinese search index, one lab run for both
editions, and the status and glossary pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from i18n_books import Built, build_both, copy_book


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    tmp = tmp_path_factory.mktemp("i18n")
    result = build_both(copy_book(tmp), tmp / "_build")
    assert result.codes == {"en": 0, "zh_CN": 0}, result.logs
    return result


def test_a_translated_paragraph_is_chinese(built: Built) -> None:
    page = built.page("attention", "zh_CN")
    assert "注意力按每个先前 token 与 query 的得分做 softmax，以此为权重。" in page
    assert "Attention weighs every earlier token" not in page
    assert "<h1>注意力" in page
    # the English edition is the source, untouched
    assert "Attention weighs every earlier token" in built.page("attention")


def test_code_math_and_lab_transcript_are_shared(built: Built) -> None:
    zh, en = built.page("attention", "zh_CN"), built.page("attention")
    for shared in ("scores", "operatorname{softmax}", "round(sum([0.25,"):
        assert shared in re.sub(r"<[^>]+>", "", zh), shared
        assert shared in re.sub(r"<[^>]+>", "", en), shared
    assert "得分之和为一" in zh  # the lab's title is a unit; its examples are not


def test_fuzzy_and_untranslated_fall_back_to_english_with_the_banner(built: Built) -> None:
    page = built.page("pipeline", "zh_CN")
    assert "本页有 2 段译文待更新，暂以英文原文显示" in page
    # the outdated translation (it says 4 micro-batches and 3/7) is never shown
    assert "3/7" not in page
    assert (
        '<p class="atlas-i18n-stale atlas-i18n-fuzzy">The bubble of a pipeline with 4 stages '
        "and 8 micro-batches is 3/11 of the step.</p>" in page
    )
    assert '<p class="atlas-i18n-stale atlas-i18n-untranslated">A third paragraph' in page
    # a page wholly translated has no banner; the English edition never has one
    assert "atlas-i18n-banner" not in built.page("attention", "zh_CN")
    assert "atlas-i18n-banner" not in built.page("pipeline")


def test_the_switch_links_both_ways_by_relative_links(built: Built) -> None:
    en_link = re.search(r'atlas-language-switch">[^<]*<a href="([^"]+)"', built.page("pipeline"))
    zh_link = re.search(
        r'atlas-language-switch">[^<]*<a href="([^"]+)"', built.page("pipeline", "zh_CN")
    )
    assert en_link and zh_link
    assert en_link.group(1) == "zh/pipeline.html"
    assert zh_link.group(1) == "../pipeline.html"
    # from disk: each link resolves to the other edition's page of the same name
    assert (built.html / en_link.group(1)).resolve() == (built.html / "zh/pipeline.html").resolve()
    assert (built.html / "zh" / zh_link.group(1)).resolve() == (
        built.html / "pipeline.html"
    ).resolve()


def test_chinese_pages_say_their_language(built: Built) -> None:
    assert '<html class="no-js" lang="zh-CN"' in built.page("index", "zh_CN")
    assert '<html class="no-js" lang="en"' in built.page("index")


def search_terms(folder: Path) -> dict[str, object]:
    text = (folder / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])["terms"]


def test_the_chinese_search_index_holds_jiebas_tokens(built: Built) -> None:
    terms = search_terms(built.html / "zh")
    assert {"注意力", "流水线", "并行"} <= set(terms)
    # a glossary rendering is a word of its own, beside jieba's parts
    assert "流水线并行" in terms
    # the English index does not segment Chinese (its glossary table holds 流水线并行 whole)
    assert "流水线" not in search_terms(built.html)


def test_the_lab_runs_once_for_both_editions(built: Built) -> None:
    assert built.lab_log.read_text().splitlines() == ["ran"]
    assert "passed" in built.page("attention", "zh_CN")


def test_the_status_page_counts_each_pages_units(built: Built) -> None:
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", built.page("status", "zh_CN")))
    # index 3, attention 3, pipeline 1 of 4 translated (+1 fuzzy, +1 untranslated), ...
    assert "6 个页面共 14 个翻译单元：已译 12，待更新 1，未译 1；1 个页面已标记为完成。" in text
    assert "流水线并行 2 1 1" in text  # the glossary violation still counts as translated
    assert "注意力 3 0 0 是" in text
    english = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", built.page("status")))
    assert "14 units on 6 pages: 12 translated, 1 fuzzy, 1 untranslated" in english


def test_the_glossary_page_reads_the_glossary_file(built: Built) -> None:
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", built.page("glossary", "zh_CN")))
    assert "术语 中文译名 说明" in text
    assert "pipeline parallelism 流水线并行" in text
    assert "KV cache 保留英文" in text
    english = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", built.page("glossary")))
    assert "KV cache kept in English" in english


def test_a_glossary_violation_is_reported_at_its_catalog_line(built: Built) -> None:
    catalog = built.src / "locales/zh_CN/LC_MESSAGES/pipeline.po"
    line = (
        catalog.read_text()
        .splitlines()
        .index('msgid "Pipeline parallelism gives each stage a contiguous block of layers."')
    )
    expected = f"{catalog}:{line + 1}: WARNING: the English holds the glossary term "
    assert expected + '"pipeline parallelism"' in built.logs["zh_CN"]
    assert "[i18n.glossary]" in built.logs["zh_CN"]
    # kept-in-English terms used in English, renderings used: no other warning
    assert built.logs["zh_CN"].count("WARNING") == 1
    assert "WARNING" not in built.logs["en"]


def test_a_translated_doctree_holds_its_own_page_only(built: Built) -> None:
    """Sphinx parses each translated message into a document of its own; a node moved from it
    into the page must not keep naming it, or every message's document is pickled with the
    page (the book's Chinese doctrees were 18 times the English ones)."""
    import pickle

    english, chinese = (
        built.out / folder / "attention.doctree" for folder in ("doctrees", "doctrees-zh")
    )
    doctree = pickle.loads(chinese.read_bytes())
    owners = {getattr(node, "_document", None) for node in doctree.findall()}
    assert [o for o in owners if o is not None and o is not doctree] == []
    assert chinese.stat().st_size < 1.5 * english.stat().st_size
