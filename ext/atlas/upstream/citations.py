"""Find every upstream citation in the book's sources, without running Sphinx.

Used by ``check``, ``lock``, ``fetch``, ``drift`` and ``bump``: they need the page, the line
and the exact text of each citation. MyST directive fences (3+ backticks or colons) and the
``{upstream}`SPEC``` role are found; literal blocks (code fences, ``{code-block}``) and inline
code spans are skipped, so a page that *shows* the syntax does not cite anything.
reStructuredText pages (``.. upstream:: SPEC``, ``:upstream:`SPEC```) are read too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from atlas.code.spec import CitationSpec, SpecError, parse_spec

FENCE = re.compile(r"^(?P<indent>[ \t>]*)(?P<fence>`{3,}|~{3,}|:{3,})\s*(?P<info>.*?)\s*$")
DIRECTIVE_INFO = re.compile(r"^\{(?P<name>[\w:.-]+)\}\s*(?P<arg>.*)$")
OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
# Directives whose body is literal text: anything inside is not a citation.
LITERAL_DIRECTIVES = {
    "code-block",
    "code",
    "sourcecode",
    "literalinclude",
    "mermaid",
    "math",
    "upstream",
    "raw",
    "csv-table",
    "lab",
}
RST_DIRECTIVE = re.compile(r"^(?P<indent>\s*)\.\.\s+upstream::\s*(?P<arg>.*?)\s*$")
RST_ROLE = re.compile(r":upstream:`(?P<arg>[^`]+)`")
ROLE_PREFIX = "{upstream}"


@dataclass(frozen=True)
class CitationSite:
    """One citation in one page. ``spec`` is None when the text does not parse (``error``)."""

    page: str
    line: int
    kind: str
    spec: CitationSpec | None
    raw: str
    options: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def _site(page: str, line: int, kind: str, raw: str, options: dict[str, str]) -> CitationSite:
    try:
        return CitationSite(page, line, kind, parse_spec(raw), raw, options)
    except SpecError as exc:
        return CitationSite(page, line, kind, None, raw, options, str(exc))


def _roles(text: str) -> list[str]:
    """Specs of ``{upstream}`SPEC``` roles in a line, skipping inline code spans."""
    found = []
    i = 0
    while True:
        start = text.find("`", i)
        if start < 0:
            return found
        run = len(text[start:]) - len(text[start:].lstrip("`"))
        close = re.compile(r"(?<!`)" + "`" * run + r"(?!`)")
        end = close.search(text, start + run)
        if end is None:
            return found
        if text[:start].endswith(ROLE_PREFIX) and run == 1:
            found.append(text[start + run : end.start()])
        i = end.end()


def scan_markdown(text: str, page: str) -> list[CitationSite]:
    """Citations in a MyST page."""
    lines = text.splitlines()
    sites: list[CitationSite] = []
    stack: list[tuple[str, int, bool]] = []  # (fence char, length, literal)
    i = 0
    while i < len(lines):
        line = lines[i]
        match = FENCE.match(line)
        literal = bool(stack) and stack[-1][2]
        if match:
            fence = match.group("fence")
            info = match.group("info")
            if stack and fence[0] == stack[-1][0] and len(fence) >= stack[-1][1] and not info:
                stack.pop()
                i += 1
                continue
            if not literal:
                directive = DIRECTIVE_INFO.match(info)
                if directive and directive.group("name") == "upstream":
                    options: dict[str, str] = {}
                    j = i + 1
                    if j < len(lines) and lines[j].strip() == "---":  # YAML option block
                        j += 1
                        while j < len(lines) and lines[j].strip() != "---":
                            key, _, value = lines[j].partition(":")
                            options[key.strip()] = value.strip().strip("\"'")
                            j += 1
                        j += 1
                    else:
                        while j < len(lines) and (opt := OPTION.match(lines[j])):
                            options[opt.group("key")] = opt.group("value")
                            j += 1
                    sites.append(_site(page, i + 1, "directive", directive.group("arg"), options))
                is_literal = not directive or directive.group("name") in LITERAL_DIRECTIVES
                stack.append((fence[0], len(fence), is_literal))
                i += 1
                continue
        if not literal:
            for raw in _roles(line):
                sites.append(_site(page, i + 1, "role", raw, {}))
        i += 1
    return sites


def scan_rst(text: str, page: str) -> list[CitationSite]:
    """Citations in a reStructuredText page."""
    sites: list[CitationSite] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = RST_DIRECTIVE.match(line)
        if match:
            options: dict[str, str] = {}
            j = i + 1
            while j < len(lines) and (opt := OPTION.match(lines[j])) and lines[j].strip():
                options[opt.group("key")] = opt.group("value")
                j += 1
            sites.append(_site(page, i + 1, "directive", match.group("arg"), options))
            continue
        for role in RST_ROLE.finditer(line):
            sites.append(_site(page, i + 1, "role", role.group("arg"), {}))
    return sites


def scan_book(book_root: Path, source_dir: str = "source") -> list[CitationSite]:
    """Every citation under ``book_root/source_dir`` (.md and .rst), in page and line order."""
    book_root = Path(book_root)
    sites: list[CitationSite] = []
    base = book_root / source_dir
    for path in sorted(base.rglob("*")):
        if path.suffix not in (".md", ".rst") or not path.is_file():
            continue
        rel = path.relative_to(book_root).as_posix()
        if any(part.startswith((".", "_build")) for part in path.relative_to(base).parts):
            continue
        text = path.read_text(encoding="utf-8")
        sites += scan_markdown(text, rel) if path.suffix == ".md" else scan_rst(text, rel)
    return sites
