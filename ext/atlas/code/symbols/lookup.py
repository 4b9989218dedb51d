"""The lookup behind a ``::symbol`` selector: which language a file is in (the table below),
its definitions (parsed once per text), and the one definition a query names, or an error
that says what is there instead."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial

from atlas.code.symbols import c, python, rust, typescript
from atlas.code.symbols.model import Symbol, SymbolError


@dataclass(frozen=True)
class Language:
    """One row of :data:`LANGUAGES`: how a language's files are recognised, parsed and named."""

    name: str  # what symbol_language says
    label: str  # how errors name it; "" when another row's label covers it (TSX is TypeScript)
    extensions: tuple[str, ...]
    definitions: Callable[[str], list[Symbol]]
    wanted: Callable[[str], str]  # the qualified name a query stands for
    # the separator of name parts when a query may give only the trailing parts of a name
    # (``::Box::area`` for ``ns::Box::area``); None when names are given in full
    trailing_separator: str | None


# A new language is one module (``definitions`` and ``wanted``) and one row here.
LANGUAGES: tuple[Language, ...] = (
    Language("python", "Python", (".py", ".pyi"), python.definitions, python.wanted, None),
    Language("c", "C", (".c",), partial(c.definitions, dialect="c"), c.wanted, "::"),
    Language(
        "cpp",
        "C++",
        (".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h", ".inl", ".ipp", ".tpp"),
        partial(c.definitions, dialect="cpp"),
        c.wanted,
        "::",
    ),
    Language(
        "cuda", "CUDA", (".cu", ".cuh"), partial(c.definitions, dialect="cuda"), c.wanted, "::"
    ),
    Language(
        "typescript",
        "TypeScript",
        (".ts", ".mts", ".cts"),
        partial(typescript.definitions, dialect="typescript"),
        typescript.wanted,
        ".",
    ),
    Language(
        "tsx", "", (".tsx",), partial(typescript.definitions, dialect="tsx"), typescript.wanted, "."
    ),
    Language("rust", "Rust", (".rs",), rust.definitions, rust.wanted, "::"),
)
BY_NAME = {lang.name: lang for lang in LANGUAGES}
BY_EXTENSION = {ext: lang.name for lang in LANGUAGES for ext in lang.extensions}


def symbol_language(path: str) -> str | None:
    """The :data:`LANGUAGES` name of a file (``python``, ``cpp``, ``rust``...) by its suffix;
    None when symbols are unsupported."""
    suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return BY_EXTENSION.get(suffix)


def supported() -> str:
    """The languages symbol selectors work for, as an error names them."""
    labels = [lang.label for lang in LANGUAGES if lang.label]
    return ", ".join(labels[:-1]) + " and " + labels[-1]


@lru_cache(maxsize=64)
def symbols_of(text: str, lang: str) -> tuple[Symbol, ...]:
    """Definitions of a file, parsed once however many of them a book cites."""
    return tuple(BY_NAME[lang].definitions(text))


def find_symbol(text: str, path: str, query: str) -> Symbol:
    """The one definition ``query`` names in ``text``; SymbolError with near names if not."""
    lang = symbol_language(path)
    if lang is None:
        raise SymbolError(
            f"symbol selectors work for {supported()} files, not {path}; cite a line range instead"
        )
    try:
        symbols = symbols_of(text, lang)
    except SyntaxError as exc:
        raise SymbolError(
            f"{path} does not parse as Python ({exc.msg} at line {exc.lineno}); cite a line range"
        ) from None
    language = BY_NAME[lang]
    wanted = language.wanted(query)
    hits = [s for s in symbols if wanted in (s.qualname, *s.aliases)]
    sep = language.trailing_separator
    if not hits and sep is not None:
        hits = [
            s for s in symbols
            if any(n.endswith(sep + wanted) for n in (s.qualname, *s.aliases))
        ]  # fmt: skip
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise SymbolError(f"symbol '{query}' is not defined in {path}{_nearest(symbols, wanted)}")
    where = ", ".join(f"{s.qualname} (lines {s.start}-{s.end})" for s in hits[:8])
    raise SymbolError(
        f"symbol '{query}' is ambiguous in {path}: {len(hits)} definitions: {where}; "
        "qualify it further or cite a line range"
    )


def _nearest(symbols: tuple[Symbol, ...], wanted: str) -> str:
    """The error's hint: up to five names close to ``wanted``, or how many there are."""
    names = [s.qualname for s in symbols]
    close = difflib.get_close_matches(wanted, names, n=5, cutoff=0.6)
    if not close:  # compare the last name parts: "Pointt" is near "outer::inner::Point"
        leaves: dict[str, list[str]] = {}
        for n in names:
            leaves.setdefault(n.replace("::", ".").rsplit(".", 1)[-1], []).append(n)
        leaf = wanted.replace("::", ".").rsplit(".", 1)[-1]
        near = difflib.get_close_matches(leaf, list(leaves), n=5, cutoff=0.6)
        close = [n for lf in near for n in leaves[lf]][:5]
    return f"; nearest: {', '.join(close)}" if close else f"; {len(names)} symbols defined"
