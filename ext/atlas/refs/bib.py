"""The bibliography file, read once, and the rules every entry must follow.

The rules (each problem names the file, the line and the fix):

- every entry has a ``url`` (http or https) or a ``doi``: the bibliography is also the book's
  link list;
- no TeX math (``$O(n^2)$``) in what the bibliography prints: the style prints it as literal
  text, lowercased (``$o(n^2)$``), in HTML and PDF alike;
- ``eprint`` of an arXiv entry is a well-formed identifier without version;
- an arxiv.org ``url`` is the abs page of a well-formed identifier, and matches ``eprint``;
- a key appears once (two chapter writers append to the same file);
- a key follows the convention: lowercase first author's surname, the year, the first
  significant word of the title (``shoeybi2019megatron``);
- a work appears once: two keys with the same arXiv identifier, DOI or title are one work
  listed twice (:mod:`atlas.refs.duplicates`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from atlas.refs import arxiv, duplicates

ENTRY_START = re.compile(
    r"^[ \t]*@(?P<type>[A-Za-z]+)[ \t]*[{(][ \t]*(?P<key>[^,\s]+)[ \t]*,", re.M
)
NON_ENTRIES = {"comment", "preamble", "string"}
# Fields the bibliography does not print as text (math there is harmless).
NOT_PRINTED = {"url", "doi", "eprint", "archiveprefix", "eprinttype", "file", "primaryclass"}


@dataclass(frozen=True)
class Problem:
    """One broken rule: where, what, and how to fix it."""

    path: str
    line: int
    message: str

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class BibEntry:
    key: str
    type: str
    line: int
    fields: dict[str, str] = field(default_factory=dict)
    field_lines: dict[str, int] = field(default_factory=dict)
    first_author: str = ""

    def line_of(self, name: str) -> int:
        return self.field_lines.get(name, self.line)


@dataclass
class Bibliography:
    """Entries of one .bib file, in file order, with the line of each entry and field."""

    path: Path
    entries: dict[str, BibEntry]
    problems: list[Problem]

    def identities(self) -> dict[str, str]:
        """Paper identity (see :func:`atlas.refs.arxiv.paper_identity`) -> key."""
        found: dict[str, str] = {}
        for entry in self.entries.values():
            urls = [entry.fields.get("url", "")]
            if entry.fields.get("eprint") and _is_arxiv(entry):
                urls.append(arxiv.abs_url(entry.fields["eprint"]))
            if entry.fields.get("doi"):
                urls.append(f"https://doi.org/{entry.fields['doi']}")
            for url in urls:
                ident = arxiv.paper_identity(url) if url else None
                if ident:
                    found.setdefault(ident, entry.key)
        return found


def _is_arxiv(entry: BibEntry) -> bool:
    prefix = entry.fields.get("archiveprefix", entry.fields.get("eprinttype", "arxiv"))
    return prefix.strip().lower() == "arxiv"


def _field_lines(text: str, start: int, end: int, first_line: int) -> dict[str, int]:
    lines: dict[str, int] = {}
    for n, line in enumerate(text[start:end].splitlines()):
        match = re.match(r"^\s*([A-Za-z][\w-]*)\s*=", line)
        if match:
            lines.setdefault(match.group(1).lower(), first_line + n)
    return lines


def load(path: Path) -> Bibliography:
    """Parse ``path`` with pybtex (as sphinxcontrib-bibtex does) and check every rule."""
    from pybtex.database.input import bibtex as bibtex_input

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    shown = str(path)
    problems: list[Problem] = []
    starts = [m for m in ENTRY_START.finditer(text) if m["type"].lower() not in NON_ENTRIES]
    entries: dict[str, BibEntry] = {}
    first_line: dict[str, int] = {}
    for i, match in enumerate(starts):
        line = text.count("\n", 0, match.start()) + 1
        key = match["key"]
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        if key.lower() in first_line:
            problems.append(
                Problem(
                    shown,
                    line,
                    f"key '{key}' is already defined at line {first_line[key.lower()]}: "
                    "keep one entry (cite the existing key) or give this work another key",
                )
            )
            continue
        first_line[key.lower()] = line
        entries[key] = BibEntry(
            key, match["type"].lower(), line, {}, _field_lines(text, match.start(), end, line)
        )
    parser = bibtex_input.Parser()
    try:
        import pybtex.errors

        # duplicates are reported above, with their lines; pybtex neither raises nor prints
        with pybtex.errors.capture():
            data = parser.parse_string(text)
    except Exception as exc:  # pybtex raises its own types and plain ones for syntax errors
        problems.append(Problem(shown, 1, f"pybtex cannot parse the file: {exc}"))
        return Bibliography(path, entries, problems)
    for key, parsed in data.entries.items():
        entry = entries.get(key)
        if entry is None:
            continue
        entry.fields = {name.lower(): str(value) for name, value in parsed.fields.items()}
    for key, parsed in data.entries.items():
        if key in entries:
            entries[key].first_author = _first_surname(parsed)
    for entry in entries.values():
        problems.extend(check_entry(shown, entry))
        problems.extend(duplicates.key_problems(shown, entry))
    problems.extend(duplicates.same_work_problems(shown, list(entries.values())))
    problems.sort(key=lambda p: p.line)
    return Bibliography(path, entries, problems)


def _first_surname(parsed: object) -> str:
    """The first author's (or editor's) surname, as written; :mod:`atlas.refs.duplicates`
    spells it as the key convention does (ASCII lowercase letters only)."""
    persons = getattr(parsed, "persons", {})
    for role in ("author", "editor"):
        people = persons.get(role) if persons else None
        if people:
            return " ".join(people[0].last_names) or " ".join(people[0].first_names)
    return ""


def check_entry(shown: str, entry: BibEntry) -> list[Problem]:
    """Every rule one entry breaks."""
    found: list[Problem] = []
    url = entry.fields.get("url", "").strip()
    eprint = entry.fields.get("eprint", "").strip()
    for name, value in entry.fields.items():
        if name in NOT_PRINTED:
            continue
        math = re.search(r"(?<!\\)\$[^$]*\$?", value)
        if math:
            found.append(
                Problem(
                    shown,
                    entry.line_of(name),
                    f"entry '{entry.key}': {name} has TeX math {math.group(0)!r}, which the "
                    "bibliography prints as literal, lowercased text: write it in words or "
                    "Unicode, braced to keep its case (e.g. {O(n²)} for $O(n^2)$)",
                )
            )
    if not url and entry.fields.get("doi", "").strip():
        pass  # the style links the DOI
    elif not url:
        hint = (
            f"https://arxiv.org/abs/{eprint}"
            if eprint
            else "the arXiv abs page, https://doi.org/DOI, or the post"
        )
        found.append(
            Problem(
                shown,
                entry.line,
                f"entry '{entry.key}' has no url field: add url = {{{hint}}} (or doi = {{...}})",
            )
        )
    elif not re.match(r"^https?://[^\s/]+", url):
        found.append(
            Problem(
                shown,
                entry.line_of("url"),
                f"entry '{entry.key}': url '{url}' is not an http(s) address",
            )
        )
    if eprint and _is_arxiv(entry):
        problem = arxiv.id_problem(eprint)
        if problem:
            found.append(
                Problem(
                    shown,
                    entry.line_of("eprint"),
                    f"entry '{entry.key}': malformed arXiv eprint: {problem}",
                )
            )
    on_arxiv = arxiv.paper_url(url) if url else None
    if on_arxiv is not None:
        kind, ident = on_arxiv
        problem = arxiv.id_problem(ident, allow_version=True)
        where = entry.line_of("url")
        if problem:
            found.append(
                Problem(shown, where, f"entry '{entry.key}': malformed arXiv URL {url}: {problem}")
            )
        else:
            bare = arxiv.strip_version(ident)
            if url != arxiv.abs_url(bare):
                found.append(
                    Problem(
                        shown,
                        where,
                        f"entry '{entry.key}': use the abs page without version, "
                        f"url = {{{arxiv.abs_url(bare)}}}",
                    )
                )
            if not eprint:
                found.append(
                    Problem(
                        shown,
                        entry.line,
                        f"entry '{entry.key}': arXiv entry without eprint: add eprint = {{{bare}}}",
                    )
                )
            elif arxiv.strip_version(eprint) != bare:
                found.append(
                    Problem(
                        shown,
                        entry.line_of("eprint"),
                        f"entry '{entry.key}': eprint {eprint} and url {url} name different papers",
                    )
                )
    return found
