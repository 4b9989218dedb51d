"""Selection filters and symbol finding, on texts written here (no git, no Sphinx)."""

from __future__ import annotations

import pytest
from atlas.code.select import (
    Segment,
    SelectError,
    apply_options,
    language_for,
    parse_emphasis,
    select,
    selected_text,
    split_lines,
)
from atlas.code.spec import parse_spec
from atlas.code.symbols.lookup import find_symbol
from atlas.code.symbols.model import SymbolError

TEXT = "".join(f"    step {i}  # mark\n" if i % 3 == 0 else f"    line {i}\n" for i in range(1, 21))


def sel(spec: str, **options: str) -> list[Segment]:
    return apply_options(select(TEXT, parse_spec(f"x f.py{spec}")), options)


def test_lines_keep_upstream_numbers_through_every_filter() -> None:
    segs = sel(":2-10,14-18", **{"start-after": "mark @2", "end-before": "mark @1", "dedent": ""})
    assert [(s.start, s.lines) for s in segs] == [(7, ("line 7", "line 8")), ]  # fmt: skip
    segs = sel(":2-10,14-18", **{"start-after": "mark @3"})
    assert [(s.start, s.end) for s in segs] == [(10, 10), (14, 18)]
    assert selected_text(segs) == "    line 10\n\u2026\n" + "\n".join(TEXT.splitlines()[13:18])


def test_filter_errors_say_what_was_found() -> None:
    with pytest.raises(SelectError, match=r"occurrence 9.*occurs on lines 3, 6, 9"):
        sel(":1-10", **{"start-after": "mark @9"})
    with pytest.raises(SelectError, match=r"occurs on lines 3, 6, 9 of the selection; say which"):
        sel(":1-10", **{"start-after": "mark"})
    with pytest.raises(SelectError, match="last line"):
        sel(":1-3", **{"start-after": "mark"})
    with pytest.raises(SelectError, match="would cut code"):
        sel(":1-3", dedent="6")
    with pytest.raises(SelectError, match="not a number"):
        sel(":1-3", dedent="four")
    with pytest.raises(SelectError, match="lines 1-3"):
        sel(":1-3", contains="line 4")
    with pytest.raises(SelectError, match="which has 20 lines"):
        sel(":19-21")
    with pytest.raises(SelectError, match="more than the 10"):
        select(TEXT, parse_spec("x f.py"), max_lines=10)
    with pytest.raises(SelectError, match="not a line or range"):
        parse_emphasis("a-b", sel(":1-3"))
    assert parse_emphasis("2, 3", sel(":1-3")) == [2, 3]


def test_line_splitting_matches_github_numbering() -> None:
    assert split_lines("a\r\nb\n") == ["a", "b"]
    assert split_lines("a\nb") == ["a", "b"]
    assert split_lines("a\n\n") == ["a", ""]


def test_languages() -> None:
    assert [language_for(p) for p in ("a/b.py", "k.cu", "k.cuh", "x.h", "Makefile", "README")] == [
        "python", "cuda", "cuda", "cpp", "make", "text",
    ]  # fmt: skip


PY = """\
import typing

LIMIT: int = 3

if typing.TYPE_CHECKING:
    Alias = int


class Outer:
    class Inner:
        async def run(self):
            return 1

    @staticmethod
    @typing.no_type_check
    def build(
        n,
    ):
        return n
"""


@pytest.mark.parametrize(
    "query, span",
    [
        ("LIMIT", (3, 3)),
        ("Alias", (6, 6)),
        ("Outer.Inner.run", (11, 12)),
        ("Outer.build", (14, 19)),
    ],
)
def test_python_symbols(query: str, span: tuple[int, int]) -> None:
    sym = find_symbol(PY, "m.py", query)
    assert (sym.start, sym.end) == span


CPP = """\
#define SQUARE(x) ((x) * (x))
namespace outer { namespace inner {
struct Point { int x; int y; };
enum class Mode { A, B };
template <int N>
int scale(int v) { return v * N; }
int scale(float v) { return 1; }
class Box {
 public:
  Box() {}
  ~Box() {}
  int area() const;
};
int Box::area() const { return 0; }
}  // namespace inner
namespace { int hidden() { return 2; } }
}  // namespace outer
extern "C" void c_entry(void) {}
"""


@pytest.mark.parametrize(
    "query, span",
    [
        ("SQUARE", (1, 1)),
        ("outer::inner::Point", (3, 3)),
        ("Mode", (4, 4)),
        ("inner::Box::area", (14, 14)),  # the out-of-line definition, not the declaration
        ("Box.~Box", (11, 11)),
        ("outer::hidden", (16, 16)),
        ("c_entry", (18, 18)),
    ],
)
def test_cpp_symbols(query: str, span: tuple[int, int]) -> None:
    sym = find_symbol(CPP, "x.hpp", query)
    assert (sym.start, sym.end) == span


def test_symbol_errors() -> None:
    with pytest.raises(SymbolError, match=r"ambiguous.*lines 5-6.*lines 7-7"):
        find_symbol(CPP, "x.cc", "scale")
    with pytest.raises(SymbolError, match="nearest: outer::inner::Point"):
        find_symbol(CPP, "x.cc", "Pointt")
    with pytest.raises(SymbolError, match="not .*x.txt"):
        find_symbol("x", "x.txt", "x")
    with pytest.raises(SymbolError, match="does not parse as Python"):
        find_symbol("def (:\n", "bad.py", "x")


TS = """\
import { B } from "./b";

/** A documented class. */
@sealed
export class Agent<T> extends B {
  private steps = 0;
  onEvent = (e: string) => {
    return e;
  };
  constructor() {
    super();
  }
  @traced
  async run(prompt: string): Promise<void> {
    await this.step(prompt);
  }
  static create(): Agent<string> {
    return new Agent();
  }
}

export const runTool = async (name: string) => {
  return name;
};

export function main(): void {}
function overload(a: string): void;
function overload(a: unknown) {}
export interface ToolSpec {
  name: string;
}
export type Turn = { role: string };
export namespace tools {
  export function list() {}
}
"""


@pytest.mark.parametrize(
    "query, span",
    [
        ("Agent", (4, 20)),  # the decorator and `export` included, the doc comment not
        ("Agent.run", (13, 16)),
        ("Agent::create", (17, 19)),
        ("Agent.constructor", (10, 12)),
        ("Agent.onEvent", (7, 9)),  # a class field holding an arrow function
        ("runTool", (22, 24)),  # an exported const holding an arrow function
        ("main", (26, 26)),
        ("overload", (28, 28)),  # the overload signature is not a definition
        ("ToolSpec", (29, 31)),
        ("Turn", (32, 32)),
        ("tools.list", (34, 34)),
    ],
)
def test_typescript_symbols(query: str, span: tuple[int, int]) -> None:
    for path in ("src/agent.ts", "src/agent.tsx", "src/agent.mts"):
        sym = find_symbol(TS, path, query)
        assert (sym.start, sym.end) == span, path


RS = """\
use std::fmt;

#[derive(Debug, Clone)]
pub struct Vm<T> {
    id: T,
}

pub enum State {
    Running,
    Stopped,
}

pub trait Snapshot {
    fn save(&self) -> Vec<u8>;
    fn name(&self) -> &str {
        "vm"
    }
}

impl<T> Vm<T> {
    pub fn new(id: T) -> Self {
        Vm { id }
    }

    #[inline]
    pub fn start(&mut self) {}
}

impl<T> Snapshot for Vm<T> {
    fn save(&self) -> Vec<u8> {
        Vec::new()
    }
}

impl<T> fmt::Display for Vm<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "vm")
    }
}

impl<T> fmt::Debug for crate::vm::Vm<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "vm")
    }
}

pub mod api {
    pub fn boot() {}

    pub mod v1 {
        pub fn boot() {}
    }
}

macro_rules! retry {
    ($e:expr) => {
        $e
    };
}

fn main() {}
"""


@pytest.mark.parametrize(
    "query, span",
    [
        ("Vm", (3, 6)),  # the attribute included
        ("State", (8, 11)),
        ("Snapshot", (13, 18)),
        ("Snapshot::name", (15, 17)),  # a provided method; `save` there has no body
        ("Vm::new", (21, 23)),
        ("Vm.start", (25, 26)),
        ("Vm::save", (30, 32)),  # inside `impl Snapshot for Vm<T>`
        ("Vm::Snapshot", (29, 33)),  # the whole trait impl
        ("Vm::Display::fmt", (36, 38)),
        ("Vm::Debug::fmt", (42, 44)),  # `crate::vm::Vm<T>` is Vm
        ("api::boot", (48, 48)),
        ("api::v1::boot", (51, 51)),
        ("crate::api::v1::boot", (51, 51)),
        ("v1::boot", (51, 51)),
        ("retry", (55, 59)),
        ("main", (61, 61)),
    ],
)
def test_rust_symbols(query: str, span: tuple[int, int]) -> None:
    sym = find_symbol(RS, "src/vm.rs", query)
    assert (sym.start, sym.end) == span


def test_typescript_and_rust_symbol_errors() -> None:
    with pytest.raises(SymbolError, match=r"ambiguous.*Vm::fmt \(lines 36-38\).*lines 42-44"):
        find_symbol(RS, "vm.rs", "Vm::fmt")
    with pytest.raises(SymbolError, match=r"ambiguous.*api::boot.*api::v1::boot"):
        find_symbol(RS, "vm.rs", "boot")
    with pytest.raises(SymbolError, match="not defined in vm.rs; nearest: Vm::start"):
        find_symbol(RS, "vm.rs", "Vm::strat")
    with pytest.raises(SymbolError, match="not defined in a.ts; nearest: Agent.run"):
        find_symbol(TS, "a.ts", "Agent.runn")
    with pytest.raises(SymbolError, match="nearest: runTool"):
        find_symbol(TS, "a.ts", "runTol")
