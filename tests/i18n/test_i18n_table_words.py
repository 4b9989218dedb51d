"""The words a computed table's cells hold (atlas.labkit.words phrases, e.g. the frontier table's
"dense", "latent", "hybrid ... full") are translated in the Chinese edition through atlas.po,
their figures and the model names unchanged; the English edition shows them as labkit writes."""

from __future__ import annotations

import re
from pathlib import Path

from atlas.labkit.words import N_, phrase
from tinybook import build_book

TABLE = """# Frontier

```{computed-table} checks/models/index.py::frontier_rows
model | Model
attention | Attention
mlp | MLP / MoE
```
"""


def rows(page: str) -> dict[str, list[str]]:
    found = {}
    for row in re.findall(r"<tr.*?</tr>", page, re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td.*?</td>", row, re.S)]
        if cells:
            found[cells[0]] = cells[1:]
    return found


def build(tmp_path: Path, language: str) -> dict[str, list[str]]:
    index = "# Book\n\n```{toctree}\nfrontier\n```\n"
    html, warnings = build_book(
        tmp_path / language,
        {"index.md": index, "frontier.md": TABLE},
        f"\nlanguage = {language!r}\n",
    )
    assert "ERROR" not in warnings, warnings
    return rows((html / "frontier.html").read_text(encoding="utf-8"))


def test_a_computed_tables_words_are_translated_and_its_data_kept(tmp_path: Path) -> None:
    zh, en = build(tmp_path, "zh_CN"), build(tmp_path, "en")
    assert zh["llama-3.1-8b"] == ["GQA 32q/8kv x128", "稠密 14336"]
    assert zh["deepseek-v3"] == ["MLA 128h，潜向量 512+64", "8+1/256 x2048"]
    assert zh["qwen3-next-80b-a3b"][0] == "混合：12/48 层全注意力，16q/2kv x256"
    assert en["llama-3.1-8b"] == ["GQA 32q/8kv x128", "dense 14336"]
    assert en["deepseek-v3"][0] == "MLA 128h, latent 512+64"


def test_a_phrase_is_its_english_outside_a_page() -> None:
    said = phrase(N_("dense {width}"), width=11008)
    assert str(said) == "dense 11008" and f"{said:>12}" == " dense 11008"
    assert said.text(lambda t: t.replace("dense", "稠密")) == "稠密 11008"
