"""Rust definitions, found with tree-sitter: ``fn``, ``struct``, ``enum``, ``union``, ``trait``
(``Trait::method`` for its provided methods), ``type``, ``const``, ``static``, ``macro_rules!``
and inline ``mod`` blocks (``module::fn``). Methods in ``impl Type`` and ``impl Trait for Type``
are ``Type::method``; when several trait impls define the same method, ``Type::Trait::method``
picks one, and ``Type::Trait`` is the whole ``impl Trait for Type`` block. ``#[...]``
attributes are part of the span."""

from __future__ import annotations

from typing import Any

from atlas.code.symbols.model import Symbol
from atlas.code.symbols.treesitter import end_line, lead_start, node_text, parse

ITEMS = {
    "function_item": "fn", "struct_item": "struct", "enum_item": "enum", "union_item": "union",
    "trait_item": "trait", "type_item": "type", "const_item": "const", "static_item": "static",
    "macro_definition": "macro", "mod_item": "mod",
}  # fmt: skip


def definitions(text: str) -> list[Symbol]:
    """Definitions of a Rust file."""
    out: list[Symbol] = []
    _walk(parse(text, "tree_sitter_rust"), "", out)
    return out


def wanted(query: str) -> str:
    """The qualified name a query stands for: ``::`` paths (``Type.method`` is
    ``Type::method``), a leading ``crate::`` or ``self::`` dropped."""
    return query.lstrip(":").replace(".", "::").removeprefix("crate::").removeprefix("self::")


def _type_name(node: Any) -> str | None:
    """``S`` for ``S``, ``S<T>``, ``crate::x::S``, ``&S``; None for what has no plain name."""
    while node is not None:
        if node.type in ("type_identifier", "identifier", "primitive_type"):
            return node_text(node)
        if node.type in ("scoped_type_identifier", "scoped_identifier"):
            node = node.child_by_field_name("name")
        elif node.type in ("generic_type", "reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
        else:
            return None
    return None


def _walk(node: Any, scope: str, out: list[Symbol], impl: tuple[str, ...] = ()) -> None:
    """``impl`` is the trait name when walking the body of ``impl Trait for Type``."""
    for child in node.named_children:
        kind = child.type
        start = lead_start(child, ("attribute_item",))
        end = end_line(child)
        if kind in ITEMS:
            name_node = child.child_by_field_name("name")
            if name_node is None:
                continue
            if kind == "mod_item" and child.child_by_field_name("body") is None:
                continue  # `mod x;` lives in another file
            name = scope + node_text(name_node)
            aliases = tuple(f"{scope}{t}::{node_text(name_node)}" for t in impl)
            out.append(Symbol(name, start, end, ITEMS[kind], aliases))
            if kind in ("mod_item", "trait_item"):
                body = child.child_by_field_name("body")
                if body is not None:
                    _walk(body, name + "::", out)
        elif kind == "impl_item":
            type_name = _type_name(child.child_by_field_name("type"))
            body = child.child_by_field_name("body")
            if type_name is None or body is None:
                continue
            trait = _type_name(child.child_by_field_name("trait"))
            if trait:
                out.append(Symbol(f"{scope}{type_name}::{trait}", start, end, "impl"))
            _walk(body, f"{scope}{type_name}::", out, (trait,) if trait else ())
        elif kind in ("declaration_list", "foreign_mod_item"):
            _walk(child, scope, out)
