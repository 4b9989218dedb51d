"""The glossary check finds a term however the English writes it (any case, hyphen or space
between its words, a plural) and accepts a rendering or the English term in the translation."""

from __future__ import annotations

from pathlib import Path

from atlas.i18n.catalogs import Catalog, Unit, UnitState
from atlas.i18n.glossary import Term, violations

TERMS = (
    Term("pipeline parallelism", ("流水线并行",)),
    Term("KV cache", ()),
    Term("attention", ("注意力",)),
)


def catalog(*pairs: tuple[str, str]) -> Catalog:
    units = tuple(
        Unit(en, zh, UnitState.TRANSLATED, line) for line, (en, zh) in enumerate(pairs, 1)
    )
    return Catalog("p", Path("p.po"), units)


def test_each_way_of_writing_a_term_is_found() -> None:
    found = violations(
        catalog(
            ("Pipeline-Parallelism splits layers.", "按层切分。"),
            ("Two KV Caches grow.", "两个缓存增长。"),
            ("Attentions differ.", "它们不同。"),
            ("pipeline  parallelism is used.", "使用流水线并行。"),
            ("The kv cache is kept.", "KV cache 被保留。"),
            ("No term here: parallel pipelines.", "这里没有术语。"),
        ),
        TERMS,
    )
    assert [(v.line, v.term.english) for v in found] == [
        (1, "pipeline parallelism"),
        (2, "KV cache"),
        (3, "attention"),
    ]
