"""The ``demo`` fixture upstream: our own small sources in Python, C++ and CUDA, over three
commits (an edit that shifts lines, a rename), with symlinks, CJK comments, a file that looks
like HTML, a long file and a binary one. Written for the tests; no upstream code.

Also ``polyglot`` (:func:`make_polyglot`), one commit of TypeScript, Rust, C and nested Python
for the symbol selectors of those languages, and the fixture book that cites them
(:func:`upstream_book`).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from gitfixtures import Commit, FixtureRepo, FixtureUpstream, Symlink, make_book, make_repo

ROOTS = Path(__file__).resolve().parent / "roots"

MODEL_V1 = '''\
"""A tiny model module written for the Atlas tests."""

import functools


def helper(x):
    return x + 1


class Model:
    """Holds weights."""

    scale = 2

    @functools.lru_cache(maxsize=None)
    @staticmethod
    def build(n):
        # 构建模型: 中文注释
        return [helper(i) for i in range(n)]

    def forward(self, x):
        y = x * self.scale
        return y
'''

MODEL_V2 = '''\
"""A tiny model module written for the Atlas tests."""

from __future__ import annotations

import functools


def helper(x):
    return x + 1


class Model:
    """Holds weights."""

    scale = 2

    @functools.lru_cache(maxsize=None)
    @staticmethod
    def build(n):
        # 构建模型: 中文注释
        return [helper(i) for i in range(n)]

    def forward(self, x):
        y = x * self.scale
        if y is None:
            return x
        z = y + 1
        return z


def helper2():
    return "</script><b>bold</b>"


class Pair:
    @property
    def x(self):
        return self._x

    @x.setter
    def x(self, value):
        self._x = value
'''

OPS_H = """\
// ops.h: declarations for the Atlas test fixture
#pragma once

namespace ops {
int twice(int x);
}
"""

OPS_CPP = """\
// ops.cpp: a C++ fixture (注释 in CJK)
#include "ops.h"

namespace ops {

class Accumulator {
 public:
  void add(int v) {
    total_ += v;
  }
  int total() const { return total_; }

 private:
  int total_ = 0;
};

int twice(int x) { return 2 * x; }

}  // namespace ops
"""

ADD_CU = """\
// add.cu: a CUDA fixture
#include <cuda_runtime.h>

template <typename T>
__global__ void add_kernel(const T* a, const T* b, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

void launch(const float* a, const float* b, float* out, int n) {
  add_kernel<<<(n + 255) / 256, 256>>>(a, b, out, n);
}
"""

LONG = "".join(f"line {i}\n" for i in range(1, 501))


def make_demo(path: Path, *, bare: bool = False) -> FixtureRepo:
    """Three commits: v1 (pkg/model.py), an edit with new files, v3 (renamed to pkg/net.py)."""
    return make_repo(
        path,
        [
            Commit({"pkg/model.py": MODEL_V1, "README.md": "demo\n"}, message="v1", tags=["v1"]),
            Commit(
                {
                    "pkg/model.py": MODEL_V2,
                    "csrc/ops.h": OPS_H,
                    "csrc/ops.cpp": OPS_CPP,
                    "kernels/add.cu": ADD_CU,
                    "link_model.py": Symlink("pkg/net.py"),
                    "escape.py": Symlink("../../outside.py"),
                    "long.txt": LONG,
                    "blob.bin": b"\x00\x01binary",
                },
                message="grow",
            ),
            Commit(renames={"pkg/model.py": "pkg/net.py"}, message="rename", tags=["v3"]),
        ],
        bare=bare,
    )


LOOP_TS = """\
// loop.ts: a TypeScript fixture written for the Atlas tests
export class Loop {
  turns = 0;

  async step(input: string): Promise<string> {
    this.turns += 1;
    return input;
  }
}

export const dispatch = (name: string) => {
  return name.length;
};
"""

SANDBOX_RS = """\
// sandbox.rs: a Rust fixture written for the Atlas tests
pub struct Sandbox {
    pid: u32,
}

impl Sandbox {
    pub fn spawn() -> Self {
        Sandbox { pid: 1 }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.pid = 0;
    }
}

pub mod api {
    pub fn boot() -> u32 {
        7
    }
}
"""

TOOLS_TS = """\
// tools.ts: TypeScript declarations of every kind a selector finds
export interface Tool {
  name: string;
  run(input: string): string;
}

export type ToolName = "search" | "shell";

export enum Mode {
  Plan,
  Act,
}

export namespace tools {
  export function list(): ToolName[] {
    return ["search", "shell"];
  }
}

function logged(target: object, key: string): void {}

export class Registry {
  @logged
  run(name: ToolName): string {
    return name;
  }
}

export function format(value: string): string;
export function format(value: number): string;
export function format(value: string | number): string {
  return String(value);
}
"""

BADGE_TSX = """\
// badge.tsx: a TSX component
export function Badge(props: { label: string }) {
  return <span className="badge">{props.label}</span>;
}
"""

CLAMP_MTS = """\
// clamp.mts: an ES module in TypeScript
export function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}
"""

VM_RS = """\
// vm.rs: Rust items of every kind a selector finds
use std::fmt;

pub const MAX_OPS: usize = 64;

pub static NAME: &str = "vm";

#[derive(Debug, Clone, Copy)]
pub enum Op {
    Push(i64),
    Add,
}

macro_rules! op_count {
    ($($op:expr),*) => { 0 $(+ { let _ = $op; 1 })* };
}

pub trait Run {
    fn step(&mut self) -> bool;

    fn go(&mut self) {
        while self.step() {}
    }
}

#[derive(Default)]
pub struct Vm {
    stack: Vec<i64>,
}

impl fmt::Display for Vm {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "vm[{}]", self.stack.len())
    }
}

impl fmt::Debug for Vm {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:?}", self.stack)
    }
}
"""

LIST_C = """\
/* list.c: a C fixture */
#include <stdlib.h>

struct list {
  int *items;
  int len;
};

int list_push(struct list *l, int v) {
  l->items[l->len++] = v;
  return l->len;
}
"""

OUTER_PY = """\
\"\"\"Nested classes, for ::Outer.Inner.method.\"\"\"


class Outer:
    class Inner:
        def method(self):
            return "inner"
"""


def make_polyglot(path: Path) -> FixtureRepo:
    """One commit of small sources in the other languages symbol selectors read: TypeScript
    (.ts, .tsx, .mts), Rust, C, and a nested Python class. Our own code, written for the tests."""
    files = {
        "src/loop.ts": LOOP_TS,
        "src/sandbox.rs": SANDBOX_RS,
        "src/tools.ts": TOOLS_TS,
        "src/badge.tsx": BADGE_TSX,
        "src/clamp.mts": CLAMP_MTS,
        "src/vm.rs": VM_RS,
        "csrc/list.c": LIST_C,
        "py/outer.py": OUTER_PY,
    }
    return make_repo(path, [Commit(files, message="polyglot")])


def upstream_book(
    path: Path,
    pages: Mapping[str, str] | None = None,
    upstreams: Mapping[str, FixtureUpstream] | None = None,
) -> Path:
    """A fixture book made from tests/roots/test-upstream (its conf.py loads the real book's
    settings): that folder's index.md, or ``pages`` instead of it, and ``upstreams`` registered
    as submodules. Returns the book's root (a git repository)."""
    shutil.copytree(ROOTS / "test-upstream", path)
    if pages is not None:
        (path / "index.md").unlink()
    return make_book(path, pages or {}, upstreams or {})
