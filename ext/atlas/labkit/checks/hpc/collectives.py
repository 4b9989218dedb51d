"""Checks of the labs of ``hpc/collectives.md``.

The chapter's checks: Checkers and instruments for the HPC chapter's labs (not taught on the
pages).
"""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from atlas.labkit.hpc import collectives as coll
from atlas.labkit.pinned import UpstreamUnavailable, pinned

ROLE = "check"


def ring_vs_library(rank: int, world: int, numel: int = 4096) -> dict[str, Any]:
    """Hand-built ring all-reduce, reduce-scatter + all-gather, and halving/doubling, each
    against ``dist.all_reduce`` of the same float64 tensor; bytes and messages counted."""
    torch.manual_seed(100 + rank)
    x = torch.randn(numel, dtype=torch.float64)
    ref = x.clone()
    dist.all_reduce(ref)
    out: dict[str, Any] = {}
    ranks = list(range(world))
    t = coll.Traffic()
    y = coll.ring_all_reduce(x.clone(), ranks, t)
    out["ring_ok"] = torch.allclose(y, ref)
    out["ring_bytes"], out["ring_messages"] = t.total, t.messages
    t = coll.Traffic()
    z = x.clone()
    chunks = coll.ring_reduce_scatter(z, ranks, t)
    rs_ok = torch.allclose(chunks[rank], ref.tensor_split(world)[rank])
    rs_bytes = t.total
    coll.ring_all_gather(chunks, ranks, t)
    out["rs_ok"], out["rs_ag_ok"] = rs_ok, torch.allclose(z, ref)
    out["rs_bytes"], out["ag_bytes"] = rs_bytes, t.total - rs_bytes
    t = coll.Traffic()
    w = coll.halving_doubling_all_reduce(x.clone(), ranks, t)
    out["hd_ok"] = torch.allclose(w, ref)
    out["hd_bytes"], out["hd_messages"] = t.total, t.messages
    out["elem_bytes"] = x.element_size()
    return out


_STUB = b"typedef enum { ncclSuccess = 0 } ncclResult_t;\n"
_SHIM = b"""#include "trees.cc"
extern "C" int atlas_dtree(int n, int rank, int* v) {
  return (int)ncclGetDtree(n, rank, v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6, v + 7);
}
"""


def nccl_dtree() -> Callable[[int, int], tuple[int, ...]]:
    """``(n, rank) -> (up0, down0_0, down0_1, up1, down1_0, down1_1)`` from NCCL's own
    ``ncclGetDtree`` at the pin, built with the system C++ compiler into a temporary folder."""
    files = pinned("nccl")
    source, pin = files.read_bytes("src/graph/trees.cc"), files.pin
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        raise UpstreamUnavailable("no C++ compiler to build NCCL's trees.cc")
    digest = hashlib.sha256(source).hexdigest()[:16]
    out = Path(tempfile.gettempdir()) / f"atlas-nccl-trees-{digest}"
    lib = out / "libtrees.so"
    if not lib.exists():
        out.mkdir(parents=True, exist_ok=True)
        (out / "nccl.h").write_bytes(_STUB)
        (out / "trees.cc").write_bytes(source)
        (out / "shim.cc").write_bytes(_SHIM)
        tmp = out / f"libtrees.{id(out)}.so"
        subprocess.run(
            [cxx, "-shared", "-fPIC", "-O1", "-I", str(out), "-o", str(tmp), str(out / "shim.cc")],
            check=True,
            capture_output=True,
        )
        tmp.replace(lib)
    so = ctypes.CDLL(str(lib))
    fn = so.atlas_dtree
    fn.restype = ctypes.c_int

    def dtree(n: int, rank: int) -> tuple[int, ...]:
        v = (ctypes.c_int * 8)(*([-1] * 8))
        fn(n, rank, v)
        s0, d00, d01, _, s1, d10, d11, _ = v
        return s0, d00, d01, s1, d10, d11

    dtree.label = f"nccl@{pin[:7]} src/graph/trees.cc"  # type: ignore[attr-defined]
    return dtree
