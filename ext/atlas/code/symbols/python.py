"""Python definitions, found with ``ast``: functions, classes, methods and assignments at module
or class level (inside ``if``, ``try`` and ``with`` blocks too), decorators included. Names are
``.``-separated (``Class.method``) and must be given in full."""

from __future__ import annotations

import ast

from atlas.code.symbols.model import Symbol


def definitions(text: str) -> list[Symbol]:
    """Definitions of a Python module; SyntaxError when it does not parse."""
    tree = ast.parse(text)
    out: list[Symbol] = []
    _walk(tree.body, "", out)
    return out


def wanted(query: str) -> str:
    """The qualified name a query stands for (``Class::method`` is ``Class.method``)."""
    return query.replace("::", ".")


def _walk(body: list[ast.stmt], scope: str, out: list[Symbol]) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{scope}{node.name}"
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            kind = "class" if isinstance(node, ast.ClassDef) else "def"
            out.append(Symbol(name, start, node.end_lineno or node.lineno, kind))
            if isinstance(node, ast.ClassDef):
                _walk(node.body, f"{name}.", out)
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
                _walk(getattr(node, block, []) or [], scope, out)
            for handler in getattr(node, "handlers", []) or []:
                _walk(handler.body, scope, out)
