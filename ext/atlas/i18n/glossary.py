"""The glossary: one TOML file that the glossary page (术语表) and the glossary check both read.

``locales/zh_CN/glossary.toml`` holds one ``[[term]]`` table per term::

    [[term]]
    en = "pipeline parallelism"
    zh = "流水线并行"            # the rendering (a list when several are accepted)

    [[term]]
    en = "KV cache"
    keep = true                  # kept in English inside Chinese prose (the Atlas's convention)

The check: a translated unit whose English holds a term (a whole word, any case, a plural
``s`` allowed) but whose Chinese holds neither a rendering nor the English term is reported at
its catalog line. A term kept in English must appear in English.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from atlas.i18n.catalogs import Catalog, UnitState

GLOSSARY_FILE = "glossary.toml"


class GlossaryError(ValueError):
    """glossary.toml cannot be read; the message names the file, the term and the fix."""


@functools.cache
def term_pattern(english: str) -> re.Pattern[str]:
    """The term as a whole word, any case, a plural ``s`` allowed. Cached: the check tries every
    term on every translated unit (700,000 times in the book's Chinese build)."""
    words = r"[\s-]+".join(re.escape(word) for word in re.split(r"[\s-]+", english))
    return re.compile(rf"(?<![\w-]){words}(?:e?s)?(?![\w-])", re.IGNORECASE)


@dataclass(frozen=True)
class Term:
    english: str
    renderings: tuple[str, ...]  # empty: kept in English
    note: str = ""

    @property
    def kept(self) -> bool:
        return not self.renderings

    def pattern(self) -> re.Pattern[str]:
        return term_pattern(self.english)

    def accepted_in(self, text: str) -> bool:
        """Whether a translation uses this term as the glossary says (or keeps it in English,
        which every entry accepts: a code name in backquotes stays English in any case)."""
        return any(r in text for r in self.renderings) or bool(self.pattern().search(text))


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    term: Term

    def message(self) -> str:
        wanted = (
            "keeps it in English"
            if self.term.kept
            else "renders it " + " or ".join(f'"{r}"' for r in self.term.renderings)
        )
        return (
            f'the English holds the glossary term "{self.term.english}", which the translation '
            f"uses neither as the glossary {wanted} nor in English: use the glossary's term "
            "(or add a rendering to glossary.toml)"
        )


def read_glossary(path: Path) -> tuple[Term, ...]:
    """The terms of ``path`` in file order; a missing file is an empty glossary."""
    if not path.is_file():
        return ()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise GlossaryError(f"{path}: {exc}. Fix the TOML syntax.") from None
    terms = []
    for index, entry in enumerate(data.get("term", []), 1):
        english = entry.get("en")
        zh = entry.get("zh", [])
        renderings = (zh,) if isinstance(zh, str) else tuple(zh)
        keep = bool(entry.get("keep", False))
        if not isinstance(english, str) or not english.strip():
            raise GlossaryError(f'{path}: term {index} has no "en": write en = "the English term".')
        if keep == bool(renderings) or not all(isinstance(r, str) and r for r in renderings):
            raise GlossaryError(
                f'{path}: term "{english}" needs either zh = "its rendering" (or a list of '
                "them) or keep = true (kept in English), not both and not neither."
            )
        terms.append(Term(english.strip(), renderings, str(entry.get("note", ""))))
    return tuple(terms)


def violations(catalog: Catalog, terms: tuple[Term, ...]) -> list[Violation]:
    """The translated units of ``catalog`` that break the glossary, in catalog order."""
    found = []
    # A term's first word, lower-cased, must be a substring of the English before its pattern
    # can match: a cheap test that spares most of the (term, unit) pairs the regular expression.
    firsts = [(term, re.split(r"[\s-]+", term.english.lower())[0]) for term in terms]
    for unit in catalog.units:
        if unit.state != UnitState.TRANSLATED:
            continue
        english = unit.msgid.lower()
        for term, first in firsts:
            if first not in english:
                continue
            if term.pattern().search(unit.msgid) and not term.accepted_in(unit.msgstr):
                found.append(Violation(catalog.path, unit.line, term))
    return found
