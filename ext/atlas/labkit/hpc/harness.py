"""Checkers and instruments for the HPC chapter's labs (not taught on the pages).

- rank functions that run a hand-built collective and the library's one on the same input,
  for :func:`atlas.labkit.run_ranks`;
- :func:`nccl_dtree`: NCCL's own ``ncclGetDtree``, compiled from ``src/graph/trees.cc`` read
  from the git objects at the pin (nothing of NCCL is stored in this repository);
- :func:`count_flops` and :func:`count_bytes`: what PyTorch actually executes, measured with
  ``FlopCounterMode`` and a dispatch-mode that sums operand and result bytes;
- :func:`hardware_rows`: the hardware registry as table rows.
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
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from atlas.labkit.pinned import UpstreamUnavailable, pinned
from atlas.labkit.hpc import collectives as coll


# -- multi-rank checks ------------------------------------------------------------------------
def in_order(rank: int, world: int, calls: list[tuple[Any, ...]]) -> list[Any]:
    """Run several rank functions one after another in one process group (one start-up)."""
    return [fn(rank, world, *args) for fn, *args in calls]


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


def two_level_vs_library(rank: int, world: int, gpus_per_node: int, numel: int) -> dict[str, Any]:
    """The two-level all-reduce against ``dist.all_reduce``; bytes split by link class."""
    torch.manual_seed(200 + rank)
    x = torch.randn(numel, dtype=torch.float64)
    ref = x.clone()
    dist.all_reduce(ref)
    node_of = {r: r // gpus_per_node for r in range(world)}
    t = coll.Traffic(node_of=node_of)
    y = coll.two_level_all_reduce(x.clone(), gpus_per_node, t)
    flat = coll.Traffic(node_of=node_of)
    coll.ring_all_reduce(x.clone(), list(range(world)), flat)
    return {
        "ok": torch.allclose(y, ref),
        "inter_bytes": t.inter_node(rank),
        "intra_bytes": t.total - t.inter_node(rank),
        "flat_inter_bytes": flat.inter_node(rank),
        "buffer_bytes": x.numel() * x.element_size(),
    }


def all_to_all_vs_routing(
    rank: int, world: int, tokens: int, hidden: int, experts: int, top_k: int
) -> dict[str, Any]:
    """Route ``tokens`` tokens to ``top_k`` of ``experts`` experts (``experts/world`` per
    rank) with a random router; send each token once to every rank that hosts one of its
    experts. Returns what was sent, what arrived, and this rank's row of the routing matrix."""
    torch.manual_seed(300 + rank)
    x = torch.randn(tokens, hidden, dtype=torch.float32)
    x[:, 0] = rank  # stamp: the sender
    x[:, 1] = torch.arange(tokens, dtype=torch.float32)  # stamp: the token index
    chosen = torch.randn(tokens, experts).topk(top_k, dim=1).indices
    owner = chosen // (experts // world)
    pairs = torch.unique(torch.stack([torch.arange(tokens).repeat_interleave(top_k),
                                      owner.reshape(-1)], 1), dim=0)
    rows, dest = x[pairs[:, 0]], pairs[:, 1]
    t = coll.Traffic()
    got, recv_counts = coll.all_to_all(rows, dest, world, t)
    routing_row = torch.bincount(dest, minlength=world).tolist()
    senders = got[:, 0].long()
    return {
        "routing_row": routing_row,
        "sent_bytes": t.total,
        "recv_counts": recv_counts,
        "recv_senders_ok": torch.equal(torch.bincount(senders, minlength=world),
                                       torch.tensor(recv_counts)),
        "token_bytes": hidden * x.element_size(),
    }


def tp_mlp_vs_dense(rank: int, world: int, tokens: int, hidden: int, ffn: int) -> dict[str, Any]:
    """The tensor-parallel MLP on ``world`` ranks against the dense MLP; bytes counted."""
    from atlas.labkit.hpc.scaleup import tp_mlp_forward

    torch.manual_seed(0)  # the same weights and input on every rank
    x = torch.randn(tokens, hidden, dtype=torch.float64)
    up = torch.randn(hidden, ffn, dtype=torch.float64) / hidden**0.5
    down = torch.randn(ffn, hidden, dtype=torch.float64) / ffn**0.5
    dense = torch.relu(x @ up) @ down
    cols = up.tensor_split(world, dim=1)[rank]
    rows = down.tensor_split(world, dim=0)[rank]
    t = coll.Traffic()
    y = tp_mlp_forward(x, cols, rows, list(range(world)), t)
    return {"ok": torch.allclose(y, dense), "bytes": t.total}


# -- NCCL's tree builder, compiled from the pin -------------------------------------------------


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


# -- what PyTorch executes ----------------------------------------------------------------------
def count_flops(fn: Callable[[], Any]) -> int:
    """FLOPs PyTorch's ``FlopCounterMode`` attributes to the matmul-like ops ``fn`` runs."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


class _Bytes(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        out = func(*args, **(kwargs or {}))
        seen = [a for a in (*args, *(kwargs or {}).values()) if isinstance(a, torch.Tensor)]
        outs = out if isinstance(out, (tuple, list)) else (out,)
        seen += [o for o in outs if isinstance(o, torch.Tensor)]
        self.total += sum(t.numel() * t.element_size() for t in seen)
        return out


def count_bytes(fn: Callable[[], Any]) -> int:
    """Bytes of every operand read and every result written by the ops ``fn`` dispatches:
    the traffic of a kernel that touches each operand exactly once."""
    with _Bytes() as mode:
        fn()
    return mode.total


def tiny_decoder_step_flops(
    layers: int, d: int, vocab: int, seq: int, batch: int
) -> tuple[int, int]:
    """FLOPs of one forward and backward pass of a small decoder on the ``meta`` device, and
    the number of weights that enter matrix products (attention projections, a 4x MLP, the
    output head; the embedding is a lookup). Full (unmasked) attention, as PaLM counts it."""
    dev = torch.device("meta")
    emb = torch.nn.Embedding(vocab, d, device=dev)
    blocks = [
        torch.nn.ModuleDict({
            "qkv": torch.nn.Linear(d, 3 * d, bias=False, device=dev),
            "out": torch.nn.Linear(d, d, bias=False, device=dev),
            "up": torch.nn.Linear(d, 4 * d, bias=False, device=dev),
            "down": torch.nn.Linear(4 * d, d, bias=False, device=dev),
        })
        for _ in range(layers)
    ]
    head = torch.nn.Linear(d, vocab, bias=False, device=dev)
    heads = max(1, d // 64)

    def step() -> None:
        x = emb(torch.zeros(batch, seq, dtype=torch.long, device=dev))
        for b in blocks:
            q, k, v = b["qkv"](x).view(batch, seq, 3, heads, d // heads).unbind(2)
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
            a = torch.softmax(q @ k.transpose(-1, -2), -1) @ v
            x = x + b["out"](a.transpose(1, 2).reshape(batch, seq, d))
            x = x + b["down"](torch.relu(b["up"](x)))
        head(x).sum().backward()

    matmul_params = sum(
        p.numel() for blk in blocks for p in blk.parameters()
    ) + head.weight.numel()
    return count_flops(step), matmul_params


# -- the registry as a table ----------------------------------------------------------------------
def hardware_rows() -> list[list[str]]:
    """One row per registered GPU: SMs, BF16 and FP8 dense FLOP/s, HBM, L2, SMEM, links."""
    from atlas.labkit.registry.hardware import GPUS

    def fmt(x: float | None, scale: float, unit: str, nd: int = 0) -> str:
        return "n/a" if x is None else f"{x / scale:,.{nd}f} {unit}"

    rows = []
    for g in GPUS.values():
        rows.append([
            g.name,
            "n/a" if g.sms is None else str(g.sms),
            fmt(g.flops.get("bf16"), 1e12, "TF"),
            fmt(g.flops.get("fp8"), 1e12, "TF"),
            fmt(g.hbm_bytes, 1e9, "GB"),
            fmt(g.hbm_bandwidth, 1e12, "TB/s", 2),
            fmt(g.l2_bytes, 2**20, "MiB"),
            fmt(g.smem_per_sm, 2**10, "KiB"),
            fmt(g.nvlink_bandwidth, 1e9, "GB/s"),
            fmt(g.nic_bandwidth, 1e9, "GB/s"),
        ])
    return rows
