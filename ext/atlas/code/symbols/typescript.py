"""TypeScript and TSX definitions, found with tree-sitter: functions, classes (abstract too),
methods and class fields (``Class.method``), top-level ``const``/``let`` declarations (an
exported arrow function is one), interfaces, type aliases, enums and namespaces (``ns.fn``);
``export`` and decorators are part of the span, overload signatures are not definitions."""

from __future__ import annotations

from typing import Any

from atlas.code.symbols.model import Symbol
from atlas.code.symbols.treesitter import end_line, lead_start, node_text, parse

GRAMMARS = {"typescript": "language_typescript", "tsx": "language_tsx"}
FUNCTIONS = {"function_declaration", "generator_function_declaration"}
CLASSES = {"class_declaration", "abstract_class_declaration", "class"}
TYPES = {"interface_declaration": "interface", "type_alias_declaration": "type",
         "enum_declaration": "enum"}  # fmt: skip
MODULES = {"internal_module", "module"}
FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}


def definitions(text: str, dialect: str = "typescript") -> list[Symbol]:
    """Definitions of a TypeScript (``dialect="typescript"``) or TSX file."""
    out: list[Symbol] = []
    _walk(parse(text, "tree_sitter_typescript", GRAMMARS[dialect]), "", out)
    return out


def wanted(query: str) -> str:
    """The qualified name a query stands for: ``.`` scopes (``ns::fn`` is ``ns.fn``)."""
    return query.lstrip(":").replace("::", ".")


def _walk(node: Any, scope: str, out: list[Symbol], outer: Any = None) -> None:
    """Definitions among ``node``'s children; ``outer`` is the statement whose span they take."""
    for child in node.children:
        if child.type == "export_statement":
            decl = child.child_by_field_name("declaration")
            subs = [decl] if decl is not None else child.named_children  # export default class
            for sub in subs:
                _one(sub, scope, out, child)
        else:
            _one(child, scope, out, outer)


def _one(child: Any, scope: str, out: list[Symbol], outer: Any) -> None:
    span_node = outer if outer is not None else child
    start = lead_start(span_node, ("decorator",))
    end = end_line(span_node)
    kind = child.type
    name_node = child.child_by_field_name("name")
    name = node_text(name_node) if name_node is not None else None
    if kind in FUNCTIONS and name:
        out.append(Symbol(scope + name, start, end, "function"))
    elif kind in CLASSES and name:
        out.append(Symbol(scope + name, start, end, "class"))
        body = child.child_by_field_name("body")
        if body is not None:
            _class_body(body, scope + name + ".", out)
    elif kind in TYPES and name:
        out.append(Symbol(scope + name, start, end, TYPES[kind]))
    elif kind in MODULES and name:
        out.append(Symbol(scope + name, start, end, "namespace"))
        body = child.child_by_field_name("body")
        if body is not None:
            _walk(body, scope + name + ".", out)
    elif kind in ("lexical_declaration", "variable_declaration"):
        for decl in child.named_children:
            if decl.type != "variable_declarator":
                continue
            target = decl.child_by_field_name("name")
            if target is None or target.type != "identifier":
                continue  # destructuring binds no single name
            value = decl.child_by_field_name("value")
            is_function = value is not None and value.type in FUNCTION_VALUES
            what = "function" if is_function else "const"
            out.append(Symbol(scope + node_text(target), start, end, what))
    elif kind in ("expression_statement", "ambient_declaration"):
        _walk(child, scope, out, outer)


def _class_body(body: Any, scope: str, out: list[Symbol]) -> None:
    for member in body.named_children:
        if member.type not in ("method_definition", "public_field_definition"):
            continue  # abstract and overload signatures have no body
        name_node = member.child_by_field_name("name")
        if name_node is None:
            continue
        name = node_text(name_node).strip("'\"")
        kind = "method" if member.type == "method_definition" else "field"
        start = lead_start(member, ("decorator",))
        out.append(Symbol(scope + name, start, end_line(member), kind))
