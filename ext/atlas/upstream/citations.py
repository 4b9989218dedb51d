"""Find every upstream citation in the book's sources, without running Sphinx.

Used by ``check``, ``lock``, ``fetch``, ``drift`` and ``bump``: they need the page, the line
and the exact text of each citation. MyST pages are read by MyST's own parser (markdown-it with
MyST's plugins, as Sphinx reads them): ``upstream`` fences (3+ backticks or colons) and the
``{upstream}`SPEC``` role are found; literal blocks (code fences, ``{code-block}``), inline code
spans and comments are skipped, so a page that *shows* the syntax does not cite anything.
reStructuredText pages (``.. upstream:: SPEC``, ``:upstream:`SPEC```) are read by line: no
page of the book is one, and docutils' own parse would need Sphinx's directives registered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from atlas.code.options import OPTIONS
from atlas.code.spec import CitationSpec, SpecError, parse_spec

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

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
# conf.py's myst_enable_extensions: the syntax the pages are written in.
MYST_EXTENSIONS = ("dollarmath", "colon_fence", "deflist", "attrs_inline", "attrs_block")


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


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    """MyST's own markdown-it parser, with the book's syntax extensions (conf.py's
    ``myst_enable_extensions``): the blocks, fences and roles Sphinx sees, found the same way."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    config = MdParserConfig(enable_extensions=set(MYST_EXTENSIONS))
    return create_md_parser(config, RendererHTML)


class _Quoting:
    """What MyST needs to split an ``upstream`` fence into its argument, options and body: the
    directive's shape, with every option read as its text (as the lock and ``check`` use it)."""

    required_arguments = 1
    optional_arguments = 0
    final_argument_whitespace = True
    has_content = True
    option_spec = dict.fromkeys(OPTIONS, lambda value: "" if value is None else value)


def _fence_options(first_line: str, body: str) -> dict[str, str]:
    from myst_parser.parsers.directives import MarkupError, parse_directive_text

    try:
        parsed = parse_directive_text(_Quoting, first_line, body)  # type: ignore[arg-type]
    except MarkupError:
        return {}
    return {key: str(value) for key, value in parsed.options.items()}


def _scan_tokens(tokens: list[Token], page: str, offset: int) -> list[CitationSite]:
    """Citations among MyST's tokens of a page, or of a directive's body (``offset``: the line
    before the body's first). MyST leaves a directive's body unparsed until the directive runs
    (then as Markdown, unless the directive's body is literal): parsed here the same way."""
    sites: list[CitationSite] = []
    for token in tokens:
        if token.type in ("fence", "colon_fence") and token.map:
            directive = DIRECTIVE_INFO.match(token.info.strip())
            if not directive:
                continue  # a code fence: literal
            name, line = directive.group("name"), offset + token.map[0] + 1
            if name == "upstream":
                options = _fence_options(directive.group("arg"), token.content)
                sites.append(_site(page, line, "directive", directive.group("arg"), options))
            elif name not in LITERAL_DIRECTIVES:
                sites += _scan_tokens(_markdown().parse(token.content), page, line)
        elif token.type == "inline" and token.map:
            line = offset + token.map[0] + 1
            for child in token.children or []:
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                elif child.type == "myst_role" and child.meta.get("name") == "upstream":
                    sites.append(_site(page, line, "role", child.content, {}))
    return sites


def scan_markdown(text: str, page: str) -> list[CitationSite]:
    """Citations in a MyST page, in line order."""
    sites = _scan_tokens(_markdown().parse(text), page, 0)
    return sorted(sites, key=lambda site: site.line)


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
