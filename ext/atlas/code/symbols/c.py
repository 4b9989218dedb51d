"""C, C++ and CUDA definitions, found with tree-sitter: function definitions (template heads
included), classes, structs, unions, enums, namespaces and macros, named with their scope
(``ns::Class::method``; ``Class.method`` is accepted too). Declarations without a body are not
definitions, so a prototype never makes a symbol ambiguous."""

from __future__ import annotations

from typing import Any

from atlas.code.symbols.model import Symbol
from atlas.code.symbols.treesitter import node_text, parse

GRAMMARS = {"c": "tree_sitter_c", "cpp": "tree_sitter_cpp", "cuda": "tree_sitter_cuda"}
SCOPES = {"namespace_definition", "class_specifier", "struct_specifier", "union_specifier"}
TYPES = {"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}
# nodes whose children may hold definitions of the same scope
CONTAINERS = {
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
}


def definitions(text: str, dialect: str) -> list[Symbol]:
    """Definitions of a file in ``dialect`` (a key of :data:`GRAMMARS`)."""
    out: list[Symbol] = []
    _walk(parse(text, GRAMMARS[dialect]), "", out)
    return out


def wanted(query: str) -> str:
    """The qualified name a query stands for: ``::`` scopes (``Class.method`` is
    ``Class::method``), a leading global ``::`` dropped."""
    return query.lstrip(":").replace(".", "::")


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
            return "".join(node_text(node).split())
        if node.type == "template_function":
            return _declarator_name(node.child_by_field_name("name"))
        node = node.child_by_field_name("declarator")
    return None


def _walk(node: Any, scope: str, out: list[Symbol]) -> None:
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
                out.append(Symbol(node_text(name_node), start, end, "macro"))
            continue
        if kind in TYPES or kind == "namespace_definition":
            name_node = child.child_by_field_name("name")
            body = child.child_by_field_name("body")
            if name_node is not None and body is not None:
                name = scope + "".join(node_text(name_node).split())
                out.append(Symbol(name, start, end, kind.split("_")[0]))
                if kind in SCOPES:
                    _walk(body, name + "::", out)
                continue
            if body is not None and kind == "namespace_definition":  # anonymous namespace
                _walk(body, scope, out)
                continue
        if kind in CONTAINERS:
            _walk(child, scope, out)
