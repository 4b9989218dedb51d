"""Find a named definition in a source file: Python through ``ast``, C/C++/CUDA through
tree-sitter. Gives the 1-based inclusive line range a ``::symbol`` selector stands for.

Python: functions, classes, methods and assignments at module or class level (inside ``if``,
``try`` and ``with`` blocks too), decorators included. C/C++/CUDA: function definitions
(template heads included), classes, structs, unions, enums, namespaces and macros, named with
their scope (``ns::Class::method``; ``Class.method`` is accepted too). Declarations without
a body are not definitions, so a prototype never makes a symbol ambiguous.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

PYTHON_EXT = {".py", ".pyi"}
C_EXT = {".c"}
CPP_EXT = {".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h", ".inl", ".ipp", ".tpp"}
CUDA_EXT = {".cu", ".cuh"}


@dataclass(frozen=True)
class Symbol:
    """A definition: its qualified name (``.``-separated for Python, ``::`` for C++)."""

    qualname: str
    start: int
    end: int
    kind: str


class SymbolError(LookupError):
    """A symbol that is not there, or is there more than once; the message says what exists."""


def symbol_language(path: str) -> str | None:
    """``python``, ``c``, ``cpp`` or ``cuda`` by file name; None when symbols are unsupported."""
    suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix in PYTHON_EXT:
        return "python"
    if suffix in C_EXT:
        return "c"
    if suffix in CPP_EXT:
        return "cpp"
    if suffix in CUDA_EXT:
        return "cuda"
    return None


# -- Python -----------------------------------------------------------------------------------
def _python_body(body: list[ast.stmt], scope: str, out: list[Symbol]) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{scope}{node.name}"
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            kind = "class" if isinstance(node, ast.ClassDef) else "def"
            out.append(Symbol(name, start, node.end_lineno or node.lineno, kind))
            if isinstance(node, ast.ClassDef):
                _python_body(node.body, f"{name}.", out)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    out.append(
                        Symbol(
                            f"{scope}{target.id}",
                            node.lineno,
                            node.end_lineno or node.lineno,
                            "assign",
                        )
                    )
        elif isinstance(node, ast.If | ast.Try | ast.With | ast.AsyncWith):
            for block in ("body", "orelse", "finalbody"):
                _python_body(getattr(node, block, []) or [], scope, out)
            for handler in getattr(node, "handlers", []) or []:
                _python_body(handler.body, scope, out)


def python_symbols(text: str) -> list[Symbol]:
    """Definitions of a Python module; SyntaxError when it does not parse."""
    tree = ast.parse(text)
    out: list[Symbol] = []
    _python_body(tree.body, "", out)
    return out


# -- C, C++, CUDA -----------------------------------------------------------------------------
@lru_cache(maxsize=4)
def _parser(lang: str) -> Any:
    from tree_sitter import Language, Parser

    if lang == "c":
        import tree_sitter_c as grammar
    elif lang == "cuda":
        import tree_sitter_cuda as grammar
    else:
        import tree_sitter_cpp as grammar
    return Parser(Language(grammar.language()))


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _declarator_name(node: Any) -> str | None:
    """The (possibly qualified) name a declarator declares."""
    while node is not None:
        if node.type in (
            "identifier",
            "field_identifier",
            "qualified_identifier",
            "destructor_name",
            "operator_name",
            "type_identifier",
        ):
            return "".join(_text(node).split())
        if node.type == "template_function":
            return _declarator_name(node.child_by_field_name("name"))
        node = node.child_by_field_name("declarator")
    return None


SCOPES = {"namespace_definition", "class_specifier", "struct_specifier", "union_specifier"}
TYPES = {"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}


def _c_walk(node: Any, scope: str, out: list[Symbol]) -> None:
    for child in node.children:
        kind = child.type
        outer = node if node.type == "template_declaration" else child
        start = outer.start_point[0] + 1
        # a node that ends at column 0 (a macro with its newline) ends on the line before
        end = child.end_point[0] + (1 if child.end_point[1] > 0 else 0)
        end = max(end, start)
        if kind == "function_definition":
            name = _declarator_name(child.child_by_field_name("declarator"))
            if name:
                out.append(Symbol(scope + name, start, end, "function"))
            continue
        if kind in ("preproc_def", "preproc_function_def"):
            name_node = child.child_by_field_name("name")
            if name_node is not None:
                out.append(Symbol(_text(name_node), start, end, "macro"))
            continue
        if kind in TYPES or kind == "namespace_definition":
            name_node = child.child_by_field_name("name")
            body = child.child_by_field_name("body")
            if name_node is not None and body is not None:
                name = scope + "".join(_text(name_node).split())
                out.append(Symbol(name, start, end, kind.split("_")[0]))
                if kind in SCOPES:
                    _c_walk(body, name + "::", out)
                continue
            if body is not None and kind == "namespace_definition":  # anonymous namespace
                _c_walk(body, scope, out)
                continue
        if kind in (
            "template_declaration",
            "declaration_list",
            "field_declaration_list",
            "linkage_specification",
            "preproc_if",
            "preproc_ifdef",
            "preproc_else",
            "preproc_elif",
            "declaration",
            "field_declaration",
            "type_definition",
            "access_specifier",
        ):
            _c_walk(child, scope, out)


def c_symbols(text: str, lang: str) -> list[Symbol]:
    """Definitions of a C, C++ or CUDA file (tree-sitter tolerates what it cannot parse)."""
    tree = _parser(lang).parse(text.encode("utf-8", "surrogateescape"))
    out: list[Symbol] = []
    _c_walk(tree.root_node, "", out)
    return out


# -- lookup -----------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def symbols_of(text: str, lang: str) -> tuple[Symbol, ...]:
    """Definitions of a file, parsed once however many of them a book cites."""
    if lang == "python":
        return tuple(python_symbols(text))
    return tuple(c_symbols(text, lang))


def find_symbol(text: str, path: str, query: str) -> Symbol:
    """The one definition ``query`` names in ``text``; SymbolError with near names if not."""
    lang = symbol_language(path)
    if lang is None:
        raise SymbolError(
            f"symbol selectors work for Python, C, C++ and CUDA files, not {path}; "
            "cite a line range instead"
        )
    try:
        symbols = symbols_of(text, lang)
    except SyntaxError as exc:
        raise SymbolError(
            f"{path} does not parse as Python ({exc.msg} at line {exc.lineno}); cite a line range"
        ) from None
    if lang == "python":
        wanted = query.replace("::", ".")
        hits = [s for s in symbols if s.qualname == wanted]
        names = [s.qualname for s in symbols]
    else:
        wanted = query.replace(".", "::").lstrip(":")
        hits = [s for s in symbols if s.qualname == wanted]
        if not hits:
            hits = [s for s in symbols if s.qualname.endswith("::" + wanted)]
        names = [s.qualname for s in symbols]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        close = difflib.get_close_matches(wanted, names, n=5, cutoff=0.6)
        if not close:  # compare the last name parts: "Pointt" is near "outer::inner::Point"
            leaves: dict[str, list[str]] = {}
            for n in names:
                leaves.setdefault(n.replace("::", ".").rsplit(".", 1)[-1], []).append(n)
            leaf = wanted.replace("::", ".").rsplit(".", 1)[-1]
            near = difflib.get_close_matches(leaf, list(leaves), n=5, cutoff=0.6)
            close = [n for lf in near for n in leaves[lf]][:5]
        hint = f"; nearest: {', '.join(close)}" if close else f"; {len(names)} symbols defined"
        raise SymbolError(f"symbol '{query}' is not defined in {path}{hint}")
    where = ", ".join(f"{s.qualname} (lines {s.start}-{s.end})" for s in hits[:8])
    raise SymbolError(
        f"symbol '{query}' is ambiguous in {path}: {len(hits)} definitions: {where}; "
        "qualify it further or cite a line range"
    )
