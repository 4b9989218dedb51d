"""Two rules about keys and works: a key follows the book's convention, and a work has one key.

Kept apart from :mod:`atlas.refs.bib` (which reads the file and checks each entry alone)
because both rules look across entries or derive a fix from several fields.

Why these rules: a work under two keys is listed twice in the bibliography and in chapter
reference lists, and a fix to its link must be made twice; a key off the convention
(``Shoeybi19``, ``megatron-lm``) cannot be guessed by the next writer, who then adds the work
again under a third key.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

from atlas.refs import arxiv

if TYPE_CHECKING:
    from atlas.refs.bib import BibEntry, Problem

KEY_CONVENTION = re.compile(r"^[a-z]+\d{4}[a-z0-9]+$")
# Words a title's "first significant word" skips.
MINOR_WORDS = {"a", "an", "the", "on", "of", "in", "for", "to", "and", "with", "towards", "via"}


def _ascii_letters(text: str, keep_digits: bool = False) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]" if keep_digits else r"[^a-z]", "", plain)


def suggested_key(entry: BibEntry) -> str | None:
    """The key the convention gives ``entry`` (surname, year, first significant title word),
    or None when a part is missing."""
    surname = _ascii_letters(entry.first_author)
    year = re.search(r"\d{4}", entry.fields.get("year", ""))
    title = entry.fields.get("title", "")
    words = [_ascii_letters(w, keep_digits=True) for w in re.split(r"[\s/-]+", title)]
    word = next((w for w in words if w and w not in MINOR_WORDS), "")
    if not (surname and year and word):
        return None
    return f"{surname}{year.group(0)}{word}"


def key_problems(shown: str, entry: BibEntry) -> list[Problem]:
    """The key convention of CONTRIBUTING's "The bibliography", with the key it suggests."""
    from atlas.refs.bib import Problem

    if KEY_CONVENTION.match(entry.key):
        return []
    suggestion = suggested_key(entry)
    hint = f" to '{suggestion}'" if suggestion else ""
    return [
        Problem(
            shown,
            entry.line,
            f"key '{entry.key}' breaks the key convention (lowercase first author's surname, the "
            "year, the first significant word of the title, e.g. shoeybi2019megatron): rename "
            f"it{hint}, and its citations with it",
        )
    ]


def work_identities(entry: BibEntry) -> list[tuple[str, str]]:
    """(kind, value) naming the work: its arXiv identifier, its DOI, its normalised title."""
    found: list[tuple[str, str]] = []
    fields = entry.fields
    prefix = fields.get("archiveprefix", fields.get("eprinttype", "arxiv")).strip().lower()
    if fields.get("eprint", "").strip() and prefix == "arxiv":
        found.append(("arXiv identifier", arxiv.strip_version(fields["eprint"].strip())))
    on_arxiv = arxiv.paper_url(fields.get("url", "").strip())
    if on_arxiv is not None:
        found.append(("arXiv identifier", arxiv.strip_version(on_arxiv[1])))
    doi = fields.get("doi", "").strip()
    ident = arxiv.paper_identity(fields.get("url", ""))
    if doi:
        found.append(("DOI", doi.lower()))
    elif ident and ident.startswith("doi:"):
        found.append(("DOI", ident.removeprefix("doi:")))
    title = _ascii_letters(fields.get("title", ""), keep_digits=True)
    if title:
        found.append(("title", title))
    return list(dict.fromkeys(found))


def same_work_problems(shown: str, entries: list[BibEntry]) -> list[Problem]:
    """One problem per entry that repeats an earlier entry's work, at the later entry."""
    from atlas.refs.bib import Problem

    first: dict[tuple[str, str], BibEntry] = {}
    found: list[Problem] = []
    for entry in entries:
        for identity in work_identities(entry):
            earlier = first.setdefault(identity, entry)
            if earlier is entry:
                continue
            kind, value = identity
            shown_value = repr(entry.fields.get("title", value)) if kind == "title" else value
            found.append(
                Problem(
                    shown,
                    entry.line,
                    f"entry '{entry.key}' is the same work as '{earlier.key}' (line "
                    f"{earlier.line}): both have the {kind} {shown_value}; keep one entry, cite "
                    f"its key everywhere, and delete the other",
                )
            )
            break
    return found
