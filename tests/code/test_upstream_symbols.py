"""The symbol lookup's table and each language module, on plain strings (no git, no Sphinx).
What each language finds through ``find_symbol`` is tested in test_upstream_select.py."""

from __future__ import annotations

import pytest
from atlas.code.symbols import c, python, rust, typescript
from atlas.code.symbols.lookup import (
    LANGUAGES,
    _nearest,
    find_symbol,
    supported,
    symbol_language,
)
from atlas.code.symbols.model import Symbol, SymbolError


def test_each_extension_belongs_to_one_language() -> None:
    extensions = [ext for lang in LANGUAGES for ext in lang.extensions]
    assert len(extensions) == len(set(extensions))
    assert all(ext.startswith(".") and ext == ext.lower() for ext in extensions)
    assert len({lang.name for lang in LANGUAGES}) == len(LANGUAGES)


@pytest.mark.parametrize(
    "path, lang",
    [
        ("pkg/m.py", "python"),
        ("stubs/m.pyi", "python"),
        ("M.PY", "python"),
        ("src/x.c", "c"),
        ("include/x.h", "cpp"),
        ("lib/x.c++", "cpp"),
        ("csrc/k.cuh", "cuda"),
        ("src/a.mts", "typescript"),
        ("src/App.tsx", "tsx"),
        ("src/vm.rs", "rust"),
        ("docs/x.txt", None),
        ("Makefile", None),
        ("dir.py/Makefile", None),  # a dot in a folder is no suffix
    ],
)
def test_symbol_language_by_suffix(path: str, lang: str | None) -> None:
    assert symbol_language(path) == lang


def test_unsupported_file_names_every_language_once() -> None:
    assert supported() == "Python, C, C++, CUDA, TypeScript and Rust"
    with pytest.raises(SymbolError) as info:
        find_symbol("x", "notes/x.txt", "x")
    assert str(info.value) == (
        "symbol selectors work for Python, C, C++, CUDA, TypeScript and Rust files, "
        "not notes/x.txt; cite a line range instead"
    )


@pytest.mark.parametrize(
    "wanted, query, name",
    [
        (python.wanted, "Outer::Inner.run", "Outer.Inner.run"),
        (c.wanted, "::ns::Box.area", "ns::Box::area"),
        (typescript.wanted, "tools::list", "tools.list"),
        (rust.wanted, "crate::api.boot", "api::boot"),
        (rust.wanted, "self::Vm::start", "Vm::start"),
    ],
)
def test_wanted_is_the_name_a_query_stands_for(wanted, query: str, name: str) -> None:
    assert wanted(query) == name


def test_python_names_are_given_in_full() -> None:
    text = "class A:\n    def m(self):\n        pass\n"
    assert find_symbol(text, "a.py", "A.m") == Symbol("A.m", 2, 3, "def")
    with pytest.raises(SymbolError, match="'m' is not defined in a.py; nearest: A.m"):
        find_symbol(text, "a.py", "m")


def test_nearest_names_close_names_then_close_last_parts() -> None:
    symbols = tuple(Symbol(n, 1, 1, "fn") for n in ("outer::inner::Point", "Vm::start", "x"))
    assert _nearest(symbols, "Vm::strat") == "; nearest: Vm::start"
    assert _nearest(symbols, "Pointt") == "; nearest: outer::inner::Point"
    assert _nearest(symbols, "zzzz") == "; 3 symbols defined"


def test_each_language_module_finds_definitions_in_plain_text() -> None:
    assert python.definitions("@d\ndef f():\n    pass\nX: int = 1\n") == [
        Symbol("f", 1, 3, "def"),
        Symbol("X", 4, 4, "assign"),
    ]
    assert c.definitions("namespace n {\nint f() { return 1; }\n}\n", "cpp") == [
        Symbol("n", 1, 3, "namespace"),
        Symbol("n::f", 2, 2, "function"),
    ]
    assert typescript.definitions("export const run = () => 1;\n", "typescript") == [
        Symbol("run", 1, 1, "function")
    ]
    assert typescript.definitions("function App() { return <div/>; }\n", "tsx") == [
        Symbol("App", 1, 1, "function")
    ]
    assert rust.definitions(
        "struct S;\nimpl Clone for S {\n    fn clone(&self) -> S { S }\n}\n"
    ) == [
        Symbol("S", 1, 1, "struct"),
        Symbol("S::Clone", 2, 4, "impl"),
        Symbol("S::clone", 3, 3, "fn", ("S::Clone::clone",)),
    ]
