"""The tree-sitter plumbing every tree-sitter language shares: a parser per grammar, loaded on
first use (so a book that cites no C, TypeScript or Rust never imports tree-sitter), and the
node helpers that turn a node into the text and 1-based lines a citation shows."""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=8)
def parser(package: str, function: str = "language") -> Any:
    """A parser for the grammar ``package.function()`` returns (``tree_sitter_rust``,
    ``tree_sitter_typescript.language_tsx``), built once per grammar."""
    from tree_sitter import Language, Parser

    grammar = getattr(importlib.import_module(package), function)
    return Parser(Language(grammar()))


def parse(text: str, package: str, function: str = "language") -> Any:
    """The root node of ``text`` parsed with a grammar (tree-sitter tolerates what it cannot
    parse; undecodable characters survive as ``surrogateescape`` bytes)."""
    return parser(package, function).parse(text.encode("utf-8", "surrogateescape")).root_node


def node_text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def end_line(node: Any) -> int:
    """The 1-based last line of a node (one ending at column 0 ends on the line before)."""
    end = node.end_point[0] + (1 if node.end_point[1] > 0 else 0)
    return max(end, node.start_point[0] + 1)


def lead_start(node: Any, kinds: tuple[str, ...]) -> int:
    """The 1-based first line of ``node`` with the decorators or attributes just before it."""
    start = node.start_point[0]
    prev = node.prev_named_sibling
    while prev is not None and prev.type in kinds:
        start = prev.start_point[0]
        prev = prev.prev_named_sibling
    return start + 1
