"""Find a named definition in a source file: the 1-based inclusive line range a ``::symbol``
selector stands for. Python is read with ``ast``; C/C++/CUDA, TypeScript and Rust with
tree-sitter.

One job per module:

- :mod:`.lookup`: the table of languages (file extensions, how each is parsed and how a query
  names its definitions), :func:`symbol_language`, :func:`symbols_of` (each text parsed once)
  and :func:`find_symbol` (one definition, or an error naming the nearest ones);
- :mod:`.model`: :class:`Symbol` and :class:`SymbolError`, which every module below builds;
- one module per language, each with ``definitions(text)`` and ``wanted(query)`` and a
  docstring saying what counts as a definition and how it is named: :mod:`.python`, :mod:`.c`
  (C, C++ and CUDA), :mod:`.typescript` (TypeScript and TSX), :mod:`.rust`;
- :mod:`.treesitter`: what the tree-sitter languages share (grammars loaded on first use, a
  node's text, its first line with decorators or attributes, its last line).

A new language is one new module and one row in :data:`.lookup.LANGUAGES`.
"""

from __future__ import annotations

from atlas.code.symbols.lookup import find_symbol, symbol_language, symbols_of
from atlas.code.symbols.model import Symbol, SymbolError

__all__ = ["Symbol", "SymbolError", "find_symbol", "symbol_language", "symbols_of"]
