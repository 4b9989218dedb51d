"""FlashAttention-3's host-side heuristics, compiled from the pinned headers and run.

The Hopper kernel picks its tile sizes (``hopper/tile_size.h``), whether to pack the query
heads of a KV head into one tile (``should_pack_gqa``) and how many ways to split the keys
(``num_splits_heuristic``, both in ``hopper/heuristics.h``) in plain ``constexpr``/``inline``
C++ that needs no CUDA. The labs of ``attention/flash-attention-2-3.md`` compare the page's
models with these functions themselves, not with numbers copied by hand: the headers are read
at the pin (never committed), compiled with the host C++ compiler into a scratch folder, and
called on the lab's arguments. No compiler, or no upstream objects: the lab is skipped.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from atlas.labkit.pinned import read

ROLE = "check"

HEADERS = ("hopper/tile_size.h", "hopper/heuristics.h")


def _compiler() -> str:
    for name in ("c++", "g++", "clang++"):
        found = shutil.which(name)
        if found:
            return found
    raise unittest.SkipTest("no host C++ compiler to build FlashAttention-3's heuristics")


def call_upstream(calls: list[str]) -> list[str]:
    """Evaluate C++ expressions over the pinned headers; one printed line per expression.

    Each expression is printed with ``std::cout``; a tuple is printed as its fields separated by
    spaces (``tile_size_fwd_sm90`` returns ``{kBlockM, kBlockN, MmaPV_is_RS, IntraWGOverlap}``).
    """
    lines = [
        "#include <algorithm>",
        "#include <cmath>",
        "#include <iostream>",
        "#include <tuple>",
        "using std::ceil;",
        *[f'#include "{Path(h).name}"' for h in HEADERS],
        "template <class T> void show(T const& v) { std::cout << v << '\\n'; }",
        "template <class... T> void show(std::tuple<T...> const& t) {",
        "  std::apply([](auto const&... x) { ((std::cout << x << ' '), ...); }, t);",
        "  std::cout << '\\n'; }",
        "int main() {",
        *[f"  show({c});" for c in calls],
        "  return 0; }",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        for h in HEADERS:
            (Path(scratch) / Path(h).name).write_text(read("flash-attention", h)[0])
        src, exe = Path(scratch) / "heuristics.cpp", Path(scratch) / "heuristics"
        src.write_text("\n".join(lines))
        built = subprocess.run(
            [_compiler(), "-std=c++17", "-O0", "-o", str(exe), str(src)],
            capture_output=True,
            text=True,
        )
        if built.returncode != 0:
            raise RuntimeError(f"compiling the pinned headers failed:\n{built.stderr}")
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines()]


def tile_sizes_fwd_sm90(
    shapes: list[tuple[int, int, bool]], element_size: int = 2
) -> dict[tuple[int, int, bool], tuple[int, int, bool, bool]]:
    """The pinned ``tile_size_fwd_sm90`` for each ``(headdim, headdim_v, causal)``, in one
    compile: ``(kBlockM, kBlockN, MmaPV_is_RS, IntraWGOverlap)``."""
    calls = [
        f"tile_size_fwd_sm90({d}, {dv}, {'true' if c else 'false'}, false, {element_size})"
        for d, dv, c in shapes
    ]
    out = {}
    for shape, line in zip(shapes, call_upstream(calls), strict=True):
        m, n, rs, overlap = (int(x) for x in line.split())
        out[shape] = (m, n, bool(rs), bool(overlap))
    return out
