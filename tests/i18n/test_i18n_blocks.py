"""Words inside diagrams and formulas (atlas.i18n.blocks), and the problems' topics: in a fixture
book whose Chinese catalog translates a topic, a mermaid label and a ``\\text{}`` phrase, the
Chinese HTML shows them translated inside an unchanged diagram and formula, the English HTML
shows them as written; ``make po``'s extraction comments each such unit with its block; a
translation that would break its block is reported at its catalog line and not applied."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

from atlas.i18n.blocks import is_phrase, replace_strings, strings_of, syntax_problem
from atlas.i18n.catalogs import open_edition
from atlas.i18n.checks import block_findings
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po
from tinybook import sphinx_build

BLOCKS = """
```{mermaid}
flowchart LR
  A["rack two"] -- "sends to" --> B{"I < P ?"}
  B --> C["broken label"]
```

$$
t_\\text{max} = \\text{bubble ratio} \\times T + 2\\text{ s}
$$
"""
COMMENT_MERMAID = "label of the mermaid diagram at ch/problems line"
COMMENT_MATH = "\\text{} of the formula at ch/problems line"


def book(rootdir: Path, tmp_path: Path) -> Path:
    """test-teach, its problems page ending with a diagram and a formula."""
    src = Path(shutil.copytree(rootdir / "test-teach", tmp_path / "book"))
    page = src / "ch" / "problems.md"
    page.write_text(page.read_text(encoding="utf-8") + BLOCKS, encoding="utf-8")
    return src


def write_catalog(src: Path, entries: dict[str, str], comments: dict[str, str]) -> Path:
    catalog = Catalog(locale="zh_CN")
    for msgid, msgstr in entries.items():
        catalog.add(msgid, msgstr, auto_comments=[comments[msgid]] if msgid in comments else [])
    po = src / "locales" / "zh_CN" / "LC_MESSAGES" / "ch" / "problems.po"
    po.parent.mkdir(parents=True, exist_ok=True)
    with po.open("wb") as handle:
        write_po(handle, catalog)
    return po


def build(src: Path, language: str, builder: str = "html") -> tuple[Path, str]:
    return sphinx_build(
        src,
        builder,
        src / f"_build-{language}-{builder}",
        atlas_labs_mode="off",
        language=language,
        locale_dirs=[str(src / "locales")],
        gettext_compact=False,
    )


def mermaid_code(page: str) -> str:
    found = re.search(r'<pre\s+class="mermaid">(.*?)</pre>', page, re.S)
    assert found is not None, page
    return html.unescape(found.group(1))


def test_a_topic_a_label_and_a_phrase_are_translated_in_chinese_only(
    rootdir: Path, tmp_path: Path
) -> None:
    src = book(rootdir, tmp_path)
    write_catalog(
        src,
        {"rack two": "二号机架", "sends to": "发送给", "bubble ratio": "气泡占比"},
        {"rack two": COMMENT_MERMAID, "sends to": COMMENT_MERMAID, "bubble ratio": COMMENT_MATH},
    )
    zh_out, _ = build(src, "zh_CN")
    zh = (zh_out / "ch" / "problems.html").read_text(encoding="utf-8")
    code = mermaid_code(zh)
    assert 'A["二号机架"] -- "发送给" --> B{"I < P ?"}' in code  # edges and shapes unchanged
    assert 'C["broken label"]' in code  # untranslated: English
    assert "\\text{气泡占比} \\times T" in zh and "t_\\text{max}" in zh and "\\text{ s}" in zh
    assert '<span class="atlas-problem-topic"> (计算)</span>' in zh
    assert "本页有" in zh  # the untranslated label counts in the banner, like any unit
    en_out, _ = build(src, "en")
    en = (en_out / "ch" / "problems.html").read_text(encoding="utf-8")
    assert 'A["rack two"] -- "sends to" -->' in mermaid_code(en)
    assert "\\text{bubble ratio}" in en and "气泡" not in en and "二号机架" not in en
    assert "(compute)" in en


def test_extraction_makes_each_string_a_commented_unit(rootdir: Path, tmp_path: Path) -> None:
    src = book(rootdir, tmp_path)
    out, warnings = build(src, "en", builder="gettext")
    with (out / "ch" / "problems.pot").open("rb") as handle:
        units = {m.id: m for m in read_po(handle) if m.id}
    assert {"rack two", "sends to", "broken label", "bubble ratio"} <= units.keys(), warnings
    assert "I < P ?" not in units and "max" not in units and " s" not in units
    fence = 1 + next(
        i for i, line in enumerate((src / "ch/problems.md").read_text().splitlines())
        if line.startswith("```{mermaid}")
    )  # fmt: skip
    said = " ".join(units["rack two"].auto_comments)  # Babel wraps a long comment
    assert said.startswith(f"{COMMENT_MERMAID} {fence}; translate only the words"), said
    assert units["bubble ratio"].auto_comments[0].startswith(COMMENT_MATH)


def test_a_translation_that_breaks_its_block_is_reported_at_its_line_and_not_applied(
    rootdir: Path, tmp_path: Path
) -> None:
    src = book(rootdir, tmp_path)
    po = write_catalog(
        src,
        {"rack two": "二号机架", "broken label": '坏"标签', "bubble ratio": "气泡{占比"},
        {"rack two": COMMENT_MERMAID, "broken label": COMMENT_MERMAID}
        | {"bubble ratio": COMMENT_MATH},
    )
    found = block_findings(open_edition(src / "locales", "zh_CN"))
    lines = po.read_text(encoding="utf-8").splitlines()
    at = {f.line: f.message for f in found}
    assert sorted(lines[n - 1] for n in at) == ['msgid "broken label"', 'msgid "bubble ratio"']
    assert all(str(f.path) == str(po) for f in found)
    assert any("mermaid label" in m and '"' in m for m in at.values())
    assert any("braces are unbalanced" in m for m in at.values())
    zh_out, _ = build(src, "zh_CN")
    zh = (zh_out / "ch" / "problems.html").read_text(encoding="utf-8")
    assert 'C["broken label"]' in mermaid_code(zh) and "\\text{bubble ratio}" in zh


def test_which_strings_are_units() -> None:
    assert [is_phrase(t) for t in ("max", "kv", " s", " bytes", "emit ", "kv heads")] == [
        False, False, False, True, True, True,
    ]  # fmt: skip
    code = (
        '---\ntitle: "a title"\n---\n%%{init: {"gantt": {"displayMode": "compact"}}}%%\n'
        'flowchart LR\n  A["two words"] --> B["x"]'
    )
    assert strings_of("mermaid", code) == ["two words"]  # front matter, %% settings, a symbol stay
    replaced = replace_strings("mermaid", code, {"two words": "两个词", "gantt": "no", "x": "y"})
    assert replaced == code.replace('"two words"', '"两个词"')  # settings and symbols untouched
    assert syntax_problem("mermaid", "好") is None and syntax_problem("math", "a}b{") is not None
