"""Words inside diagrams and formulas as units of their own: mermaid labels, ``\\text{}`` phrases.

A mermaid block and a display formula are shared by both editions (never a unit: a translator
must not be able to change a diagram's edges or a formula's symbols), yet their words showed in
English in the Chinese edition. Here each such string becomes a unit by itself:

- a mermaid label is a quoted string of the diagram (``A["rank 0"]``, ``-- "step 0" -->``,
  ``subgraph S["spine switches"]``) holding a word of two letters or more (``"I < P / W ?"`` stays);
- a ``\\text{...}`` of display math is a unit when it is a phrase: two words or more
  (``\\text{bubble ratio}``), or one word of three letters or more set off by a space
  (``\\text{ bytes}``). A single identifier (``\\text{max}``, ``\\text{kv}``) or a unit symbol
  (``\\text{ s}``) stays English, as Chinese references keep them.

How: before Sphinx's ``Locale`` (priority 20), :class:`BlockUnits` puts after each block one
:class:`block_unit` per string (an ``addnodes.translatable``, as toctree captions are: Sphinx
extracts it and hands it its translation). The gettext builder writes them into the page's
catalog; :func:`annotate_templates` adds a ``#.`` comment that names the block and what the
translation must not contain. In a translated edition :class:`ApplyBlockUnits` (after
:class:`atlas.i18n.units.StaleUnits` counted the untranslated ones) replaces only that string
inside the block, and drops the carriers. A translation that would break the block's syntax is
not applied (the English stays) and ``atlas.i18n check`` reports it at its catalog line
(:func:`syntax_problem`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from babel.messages.pofile import read_po, write_po
from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.builders.gettext import MessageCatalogBuilder
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import get_node_line

from atlas.i18n.config import is_translation

MERMAID = "mermaid"
MATH = "math"
# The first words of a block unit's "#." comment: how the check knows a unit's kind.
COMMENT_PREFIX = {MERMAID: "label of the mermaid diagram", MATH: "\\text{} of the formula"}
RULE = {
    MERMAID: 'write no " { } or line break in it (they would end the label)',
    MATH: "keep its braces balanced (an unbalanced one breaks the formula)",
}

LABEL = re.compile(r'"([^"\n]*)"')  # a quoted mermaid string
TEXT = re.compile(r"\\text\{([^{}]*)\}")  # \text{...} without nested braces
WORD = re.compile(r"[^\W\d_]{2,}")  # a word: two letters or more
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)  # the directive's :config: and :title:


def _words(text: str) -> list[str]:
    return WORD.findall(text)


def is_label(text: str) -> bool:
    """A mermaid string with a word in it (a bare symbol or number is no unit)."""
    return bool(_words(text))


def is_phrase(text: str) -> bool:
    """A ``\\text{}`` worth translating: two words or more, or one of 3+ letters beside a space."""
    words = _words(text)
    if len(words) >= 2:
        return True
    stripped = text.strip()
    return len(words) == 1 and stripped != text and len(stripped) >= 3 and words[0] == stripped


def _split_front(code: str) -> tuple[str, str]:
    """The mermaid code's front matter (left as it is) and its diagram."""
    match = FRONT_MATTER.match(code)
    return (match.group(0), code[match.end() :]) if match else ("", code)


def _in_directive(diagram: str, match: re.Match[str]) -> bool:
    """Whether a quoted string stands on a ``%%`` line (``%%{init: {"gantt": ...}}%%``, a
    comment): settings, never words."""
    start = diagram.rfind("\n", 0, match.start()) + 1
    return diagram[start:].lstrip().startswith("%%")


def strings_of(kind: str, code: str) -> list[str]:
    """The unit strings of a block, each once, in order."""
    if kind == MERMAID:
        diagram = _split_front(code)[1]
        found = [m.group(1) for m in LABEL.finditer(diagram) if not _in_directive(diagram, m)]
        return list(dict.fromkeys(s for s in found if is_label(s)))
    found = [m.group(1) for m in TEXT.finditer(code)]
    return list(dict.fromkeys(s for s in found if is_phrase(s)))


def replace_strings(kind: str, code: str, translations: dict[str, str]) -> str:
    """``code`` with each unit string replaced by its translation, nothing else touched."""
    if kind == MERMAID:
        front, diagram = _split_front(code)

        def label(m: re.Match[str]) -> str:
            if _in_directive(diagram, m) or not is_label(m.group(1)):
                return m.group(0)
            return f'"{translations.get(m.group(1), m.group(1))}"'

        body = LABEL.sub(label, diagram)
        return front + body

    def text(m: re.Match[str]) -> str:
        said = m.group(1)
        return "\\text{" + (translations.get(said, said) if is_phrase(said) else said) + "}"

    return TEXT.sub(text, code)


def syntax_problem(kind: str, translation: str) -> str | None:
    """Why ``translation`` would break its block, or None."""
    if kind == MERMAID:
        bad = sorted({c for c in translation if c in '"{}\n'})
        if bad:
            shown = " ".join("line break" if c == "\n" else c for c in bad)
            return f"it holds {shown}, which would end or break the mermaid label: {RULE[kind]}"
        return None
    depth = 0
    for char in translation:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            break
    if depth != 0:
        return f"its braces are unbalanced, which would break the formula: {RULE[kind]}"
    return None


def kind_of_comment(comments: Sequence[str]) -> str | None:
    """The kind of a catalog unit from its ``#.`` comments (None: an ordinary unit)."""
    for comment in comments:
        for kind, prefix in COMMENT_PREFIX.items():
            if comment.startswith(prefix):
                return kind
    return None


class block_unit(nodes.General, nodes.Element, addnodes.translatable):  # noqa: N801
    """One string of the block just before it, as a unit; never written (dropped before)."""

    def preserve_original_messages(self) -> None:
        pass  # the original is an attribute, never changed

    def apply_translated_message(self, original_message: str, translated_message: str) -> None:
        if original_message == self["original"]:
            self["translation"] = translated_message

    def extract_original_messages(self) -> Sequence[str]:
        return [self["original"]]


def _blocks(document: nodes.document) -> Iterator[tuple[nodes.Element, str, str]]:
    """Each mermaid block and display formula with its kind and code."""
    for node in document.findall(nodes.Element):
        if type(node).__name__ == MERMAID and "code" in node:
            yield node, MERMAID, node["code"]
        elif isinstance(node, nodes.math_block):
            yield node, MATH, node.astext()


FENCE = re.compile(r"^\s*(`{3,}|:{3,})\{mermaid\}")


def _fence_lines(document: nodes.document) -> list[int]:
    """The 1-based lines of the page's mermaid fences, in order (mermaid nodes carry no line:
    the n-th diagram of the page is the n-th fence of its source)."""
    source = Path(document.get("source") or "")
    if not source.is_file():
        return []
    lines = source.read_text(encoding="utf-8").splitlines()
    return [number for number, text in enumerate(lines, 1) if FENCE.match(text)]


class BlockUnits(SphinxTransform):
    """Put one :class:`block_unit` after each block per string (before ``Locale``)."""

    default_priority = 11  # after SharedBlocks (10), before Locale (20)

    def apply(self, **kwargs: object) -> None:
        source = self.document.get("source")
        fences = iter(_fence_lines(self.document))
        for node, kind, code in list(_blocks(self.document)):
            line = node.line if kind == MATH else next(fences, None)
            strings = strings_of(kind, code)
            if not strings or node.parent is None:
                continue
            if line is None:
                line = _parent_line(node)
            at = node.parent.index(node) + 1
            for offset, text in enumerate(strings):
                unit = block_unit("", original=text, kind=kind, block_line=line)
                unit.source, unit.line = source, line
                node.parent.insert(at + offset, unit)


def _parent_line(node: nodes.Element) -> int | None:
    try:
        return get_node_line(node)
    except ValueError:
        return None


class ApplyBlockUnits(SphinxTransform):
    """Write each translation into its block (a translated edition), then drop the carriers."""

    default_priority = 22  # after Locale (20) and StaleUnits (21)

    def apply(self, **kwargs: object) -> None:
        if getattr(self.env, "_builder_cls", None) is MessageCatalogBuilder:
            return  # the catalog builder extracts the carriers at write time
        translated = is_translation(self.config)
        for unit in list(self.document.findall(block_unit)):
            parent = unit.parent
            if parent is None:
                continue
            index = parent.index(unit)
            block = next(
                (n for n in reversed(parent.children[:index]) if not isinstance(n, block_unit)),
                None,
            )
            translation = unit.get("translation")
            if translated and block is not None and translation:
                if syntax_problem(unit["kind"], translation) is None:
                    _rewrite(block, unit["kind"], {unit["original"]: translation})
            parent.remove(unit)


def _rewrite(block: nodes.Element, kind: str, translations: dict[str, str]) -> None:
    if kind == MERMAID:
        block["code"] = replace_strings(kind, block["code"], translations)
        return
    latex = replace_strings(kind, block.astext(), translations)
    block.children = []
    block += nodes.Text(latex)


def comment_for(unit: block_unit, docname: str) -> str:
    """The ``#.`` comment of a unit's catalog entry: which block, and the rule."""
    kind = unit["kind"]
    where = f"{docname} line {unit['block_line']}" if unit.get("block_line") else docname
    return f"{COMMENT_PREFIX[kind]} at {where}; translate only the words, {RULE[kind]}"


def annotate_templates(app: Sphinx, exception: BaseException | None) -> None:
    """At ``build-finished`` of the gettext builder: comment each block unit in its ``.pot``."""
    if exception is not None or app.builder.name != "gettext":
        return
    outdir = Path(app.builder.outdir)
    for docname in sorted(app.env.found_docs):
        try:
            doctree = app.env.get_doctree(docname)
        except (FileNotFoundError, OSError):
            continue
        comments: dict[str, list[str]] = {}
        for unit in doctree.findall(block_unit):
            said = comments.setdefault(unit["original"], [])
            if (text := comment_for(unit, docname)) not in said:
                said.append(text)
        pot = outdir / f"{docname_to_domain(docname, app.config.gettext_compact)}.pot"
        if not comments or not pot.is_file():
            continue
        with pot.open("rb") as handle:
            template = read_po(handle)
        for message in template:
            if message.id in comments:
                message.auto_comments = comments[message.id]
        with pot.open("wb") as handle:
            write_po(handle, template, width=0)


def setup(app: Sphinx) -> None:
    """Register the carrier node and the transforms (called by :mod:`atlas.i18n`)."""
    app.add_node(block_unit)
    app.add_transform(BlockUnits)
    app.add_transform(ApplyBlockUnits)
    app.connect("build-finished", annotate_templates)
