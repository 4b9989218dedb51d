"""What a symbol lookup gives back, in a module of its own so that every language module can
build :class:`Symbol` records without importing the lookup that imports them."""

from __future__ import annotations

from dataclasses import dataclass


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
