"""The ``demo`` fixture upstream: our own small sources in Python, C++ and CUDA, over three
commits (an edit that shifts lines, a rename), with symlinks, CJK comments, a file that looks
like HTML, a long file and a binary one. Written for the tests; no upstream code.

Also the fixture book that cites it (:func:`upstream_book`).
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
