"""Find a named definition in a source file: Python through ``ast``; C/C++/CUDA, TypeScript and
Rust through tree-sitter. Gives the 1-based inclusive line range a ``::symbol`` selector stands for.

Python: functions, classes, methods and assignments at module or class level (inside ``if``,
``try`` and ``with`` blocks too), decorators included. C/C++/CUDA: function definitions
(template heads included), classes, structs, unions, enums, namespaces and macros, named with
their scope (``ns::Class::method``; ``Class.method`` is accepted too). Declarations without
a body are not definitions, so a prototype never makes a symbol ambiguous.

TypeScript (.ts, .tsx, .mts, .cts): functions, classes (abstract too), methods and class fields
(``Class.method``), top-level ``const``/``let`` declarations (an exported arrow function is one),
interfaces, type aliases, enums and namespaces (``ns.fn``); ``export`` and decorators are part of
the span, overload signatures are not definitions.

Rust (.rs): ``fn``, ``struct``, ``enum``, ``union``, ``trait`` (``Trait::method`` for its provided
methods), ``type``, ``const``, ``static``, ``macro_rules!`` and inline ``mod`` blocks
(``module::fn``). Methods in ``impl Type`` and ``impl Trait for Type`` are ``Type::method``; when
several trait impls define the same method, ``Type::Trait::method`` picks one, and ``Type::Trait``
is the whole ``impl Trait for Type`` block. ``#[...]`` attributes are part of the span.
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
TS_EXT = {".ts", ".mts", ".cts"}
TSX_EXT = {".tsx"}
RUST_EXT = {".rs"}


@dataclass(frozen=True)
class Symbol:
    """A definition: its qualified name (``.``-separated for Python and TypeScript, ``::`` for
    C++ and Rust), and other names it may be cited by (a Rust trait method's ``Type::Trait::m``)."""

    qualname: str
    start: int
    end: int
    kind: str
    aliases: tuple[str, ...] = ()


class SymbolError(LookupError):
    """A symbol that is not there, or is there more than once; the message says what exists."""


def symbol_language(path: str) -> str | None:
    """``python``, ``c``, ``cpp``, ``cuda``, ``typescript``, ``tsx`` or ``rust`` by file name;
    None when symbols are unsupported."""
    suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix in PYTHON_EXT:
        return "python"
    if suffix in C_EXT:
        return "c"
    if suffix in CPP_EXT:
        return "cpp"
    if suffix in CUDA_EXT:
        return "cuda"
    if suffix in TS_EXT:
        return "typescript"
    if suffix in TSX_EXT:
        return "tsx"
    if suffix in RUST_EXT:
        return "rust"
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
@lru_cache(maxsize=8)
def _parser(lang: str) -> Any:
    from tree_sitter import Language, Parser

    if lang in ("typescript", "tsx"):
        import tree_sitter_typescript as ts

        grammar_fn = ts.language_tsx if lang == "tsx" else ts.language_typescript
        return Parser(Language(grammar_fn()))
    if lang == "rust":
        import tree_sitter_rust as grammar
    elif lang == "c":
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


def _end_line(node: Any) -> int:
    """The 1-based last line of a node (one ending at column 0 ends on the line before)."""
    end = node.end_point[0] + (1 if node.end_point[1] > 0 else 0)
    return max(end, node.start_point[0] + 1)


def _lead_start(node: Any, kinds: tuple[str, ...]) -> int:
    """The 1-based first line of ``node`` with the decorators or attributes just before it."""
    start = node.start_point[0]
    prev = node.prev_named_sibling
    while prev is not None and prev.type in kinds:
        start = prev.start_point[0]
        prev = prev.prev_named_sibling
    return start + 1


# -- TypeScript -------------------------------------------------------------------------------
TS_FUNCTIONS = {"function_declaration", "generator_function_declaration"}
TS_CLASSES = {"class_declaration", "abstract_class_declaration", "class"}
TS_TYPES = {"interface_declaration": "interface", "type_alias_declaration": "type",
            "enum_declaration": "enum"}  # fmt: skip
TS_MODULES = {"internal_module", "module"}


def _ts_walk(node: Any, scope: str, out: list[Symbol], outer: Any = None) -> None:
    """Definitions among ``node``'s children; ``outer`` is the statement whose span they take."""
    for child in node.children:
        if child.type == "export_statement":
            decl = child.child_by_field_name("declaration")
            subs = [decl] if decl is not None else child.named_children  # export default class
            for sub in subs:
                _ts_one(sub, scope, out, child)
        else:
            _ts_one(child, scope, out, outer)


def _ts_one(child: Any, scope: str, out: list[Symbol], outer: Any) -> None:
    span_node = outer if outer is not None else child
    start = _lead_start(span_node, ("decorator",))
    end = _end_line(span_node)
    kind = child.type
    name_node = child.child_by_field_name("name")
    name = _text(name_node) if name_node is not None else None
    if kind in TS_FUNCTIONS and name:
        out.append(Symbol(scope + name, start, end, "function"))
    elif kind in TS_CLASSES and name:
        out.append(Symbol(scope + name, start, end, "class"))
        body = child.child_by_field_name("body")
        if body is not None:
            _ts_class_body(body, scope + name + ".", out)
    elif kind in TS_TYPES and name:
        out.append(Symbol(scope + name, start, end, TS_TYPES[kind]))
    elif kind in TS_MODULES and name:
        out.append(Symbol(scope + name, start, end, "namespace"))
        body = child.child_by_field_name("body")
        if body is not None:
            _ts_walk(body, scope + name + ".", out)
    elif kind in ("lexical_declaration", "variable_declaration"):
        for decl in child.named_children:
            if decl.type != "variable_declarator":
                continue
            target = decl.child_by_field_name("name")
            if target is None or target.type != "identifier":
                continue  # destructuring binds no single name
            value = decl.child_by_field_name("value")
            what = "function" if value is not None and value.type in (
                "arrow_function", "function_expression", "function", "generator_function"
            ) else "const"  # fmt: skip
            out.append(Symbol(scope + _text(target), start, end, what))
    elif kind in ("expression_statement", "ambient_declaration"):
        _ts_walk(child, scope, out, outer)


def _ts_class_body(body: Any, scope: str, out: list[Symbol]) -> None:
    for member in body.named_children:
        if member.type not in ("method_definition", "public_field_definition"):
            continue  # abstract and overload signatures have no body
        name_node = member.child_by_field_name("name")
        if name_node is None:
            continue
        name = _text(name_node).strip("'\"")
        kind = "method" if member.type == "method_definition" else "field"
        start = _lead_start(member, ("decorator",))
        out.append(Symbol(scope + name, start, _end_line(member), kind))


def ts_symbols(text: str, lang: str = "typescript") -> list[Symbol]:
    """Definitions of a TypeScript (or TSX) file."""
    tree = _parser(lang).parse(text.encode("utf-8", "surrogateescape"))
    out: list[Symbol] = []
    _ts_walk(tree.root_node, "", out)
    return out


# -- Rust -------------------------------------------------------------------------------------
RUST_ITEMS = {
    "function_item": "fn", "struct_item": "struct", "enum_item": "enum", "union_item": "union",
    "trait_item": "trait", "type_item": "type", "const_item": "const", "static_item": "static",
    "macro_definition": "macro", "mod_item": "mod",
}  # fmt: skip


def _rust_type_name(node: Any) -> str | None:
    """``S`` for ``S``, ``S<T>``, ``crate::x::S``, ``&S``; None for what has no plain name."""
    while node is not None:
        if node.type in ("type_identifier", "identifier", "primitive_type"):
            return _text(node)
        if node.type in ("scoped_type_identifier", "scoped_identifier"):
            node = node.child_by_field_name("name")
        elif node.type in ("generic_type", "reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
        else:
            return None
    return None


def _rust_walk(node: Any, scope: str, out: list[Symbol], impl: tuple[str, ...] = ()) -> None:
    """``impl`` is the trait name when walking the body of ``impl Trait for Type``."""
    for child in node.named_children:
        kind = child.type
        start = _lead_start(child, ("attribute_item",))
        end = _end_line(child)
        if kind in RUST_ITEMS:
            name_node = child.child_by_field_name("name")
            if name_node is None:
                continue
            if kind == "mod_item" and child.child_by_field_name("body") is None:
                continue  # `mod x;` lives in another file
            name = scope + _text(name_node)
            aliases = tuple(f"{scope}{t}::{_text(name_node)}" for t in impl)
            out.append(Symbol(name, start, end, RUST_ITEMS[kind], aliases))
            if kind in ("mod_item", "trait_item"):
                body = child.child_by_field_name("body")
                if body is not None:
                    _rust_walk(body, name + "::", out)
        elif kind == "impl_item":
            type_name = _rust_type_name(child.child_by_field_name("type"))
            body = child.child_by_field_name("body")
            if type_name is None or body is None:
                continue
            trait = _rust_type_name(child.child_by_field_name("trait"))
            if trait:
                out.append(Symbol(f"{scope}{type_name}::{trait}", start, end, "impl"))
            _rust_walk(body, f"{scope}{type_name}::", out, (trait,) if trait else ())
        elif kind in ("declaration_list", "foreign_mod_item"):
            _rust_walk(child, scope, out)


def rust_symbols(text: str) -> list[Symbol]:
    """Definitions of a Rust file."""
    tree = _parser("rust").parse(text.encode("utf-8", "surrogateescape"))
    out: list[Symbol] = []
    _rust_walk(tree.root_node, "", out)
    return out


# -- lookup -----------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def symbols_of(text: str, lang: str) -> tuple[Symbol, ...]:
    """Definitions of a file, parsed once however many of them a book cites."""
    if lang == "python":
        return tuple(python_symbols(text))
    if lang in ("typescript", "tsx"):
        return tuple(ts_symbols(text, lang))
    if lang == "rust":
        return tuple(rust_symbols(text))
    return tuple(c_symbols(text, lang))


def find_symbol(text: str, path: str, query: str) -> Symbol:
    """The one definition ``query`` names in ``text``; SymbolError with near names if not."""
    lang = symbol_language(path)
    if lang is None:
        raise SymbolError(
            "symbol selectors work for Python, C, C++, CUDA, TypeScript and Rust files, "
            f"not {path}; "
            "cite a line range instead"
        )
    try:
        symbols = symbols_of(text, lang)
    except SyntaxError as exc:
        raise SymbolError(
            f"{path} does not parse as Python ({exc.msg} at line {exc.lineno}); cite a line range"
        ) from None
    names = [s.qualname for s in symbols]
    if lang == "python":
        wanted = query.replace("::", ".")
        hits = [s for s in symbols if s.qualname == wanted]
    else:
        sep = "." if lang in ("typescript", "tsx") else "::"
        wanted = query.lstrip(":").replace("::" if sep == "." else ".", sep)
        if lang == "rust":
            wanted = wanted.removeprefix("crate::").removeprefix("self::")
        hits = [s for s in symbols if wanted in (s.qualname, *s.aliases)]
        if not hits:
            hits = [
                s for s in symbols
                if any(n.endswith(sep + wanted) for n in (s.qualname, *s.aliases))
            ]  # fmt: skip
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
