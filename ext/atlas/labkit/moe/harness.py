"""Harness of the MoE labs (not taught): the upstreams' own code at the pin, and the checks.

Nothing of Megatron-LM, DeepEP or EPLB is copied here. Their source is read from the book's
upstream object store at the pinned commit and executed in memory: whole files where they only
need torch (EPLB's ``eplb.py``, DeepEP's ``deep_ep/utils/refs.py``), single functions cut out by
``ast`` where the file imports the rest of its framework (Megatron's ``moe_utils.py``). When
the objects are missing, :mod:`atlas.labkit.pinned` raises ``UpstreamUnavailable`` (a
``unittest.SkipTest``), in a rank worker too, and the lab shows a visible skip.
"""

from __future__ import annotations

import math
import types
from typing import Any, List, Optional, Tuple, Union

import torch
import torch.distributed as dist

from atlas.labkit.pinned import Definitions, definitions, module
from atlas.labkit.moe import dispatch as ep
from atlas.labkit.moe import eplb as our_eplb
from atlas.labkit.moe import router as our_router
from atlas.labkit.moe.layer import MoEShape, init_weights, moe_forward

MEGATRON_MOE_UTILS = "megatron/core/transformer/moe/moe_utils.py"
MEGATRON_ROUTER_FUNCTIONS = (
    "switch_load_balancing_loss_func",
    "z_loss_func",
    "get_capacity",
    "group_limited_topk",
    "topk_routing_with_score_function",
    "compute_routing_scores_for_aux_loss",
    "apply_router_token_dropping",
    "get_updated_expert_bias",
)




# Transformer Engine, the router replay and the process-group state are absent here, as on a
# machine without them: the functions take their plain-torch paths.
_MEGATRON_ROUTER_GLOBALS: dict[str, Any] = {
    "torch": torch, "math": math, "Optional": Optional, "Tuple": Tuple, "List": List,
    "Union": Union, "HAVE_TE": False, "RouterReplay": None, "parallel_state": None,
    "is_te_min_version": lambda *_: False, "fused_moe_aux_loss": None,
    "fused_topk_with_score_function": None, "fused_compute_score_for_moe_aux_loss": None,
}


def load_megatron_router() -> Definitions:
    """Megatron-LM's routing functions from ``moe_utils.py`` at the pin, cut out by ``ast`` and
    run with Transformer Engine absent (``HAVE_TE = False``), as on a machine without it."""
    return definitions(
        "megatron", MEGATRON_MOE_UTILS, MEGATRON_ROUTER_FUNCTIONS, dict(_MEGATRON_ROUTER_GLOBALS)
    )


def load_eplb() -> types.ModuleType:
    """EPLB's ``eplb.py`` at the pin (it imports only torch)."""
    return module("eplb", "eplb.py")


def load_deepep_refs() -> types.ModuleType:
    """DeepEP's reference dispatch (``deep_ep/utils/refs.py``) at the pin. Its two helper
    imports are supplied here: ``ceil_div`` and a ``get_global_seed`` (used only by a data
    generator the labs do not call); the package's compiled extension is not needed."""
    pkg, utils = types.ModuleType("deep_ep"), types.ModuleType("deep_ep.utils")
    pkg.__path__, utils.__path__ = [], []
    envs, dmath = types.ModuleType("deep_ep.utils.envs"), types.ModuleType("deep_ep.utils.math")
    envs.get_global_seed = lambda: 0  # type: ignore[attr-defined]
    dmath.ceil_div = lambda x, y: (x + y - 1) // y  # type: ignore[attr-defined]
    extra = {"deep_ep": pkg, "deep_ep.utils": utils, "deep_ep.utils.envs": envs, "deep_ep.utils.math": dmath}
    return module("deepep", "deep_ep/utils/refs.py", extra)


def zipf(n: int, s: float, scale: float = 1.0) -> torch.Tensor:
    """Loads ``scale / rank**s`` for ranks 1..n, in a shuffled but seeded order."""
    gen = torch.Generator().manual_seed(0)
    loads = scale / torch.arange(1, n + 1, dtype=torch.float64) ** s
    return loads[torch.randperm(n, generator=gen)]


# -- the router against Megatron-LM ------------------------------------------------------------
def router_matches_megatron(rank: int, world_size: int) -> dict[str, bool]:
    """Our routing functions and Megatron's on the same logits (run on one gloo rank, which
    ``get_updated_expert_bias`` needs for its all-reduce)."""
    mg = load_megatron_router()
    gen = torch.Generator().manual_seed(3)
    t, e, k = 64, 16, 4
    logits = torch.randn(t, e, generator=gen, dtype=torch.float64)
    bias = 0.1 * torch.randn(e, generator=gen, dtype=torch.float64)
    ok: dict[str, bool] = {}

    def same_routing(ours: tuple, probs_map: tuple) -> bool:
        gates, experts = ours
        dense = torch.zeros_like(logits).scatter(1, experts, gates)
        return torch.equal(dense != 0, probs_map[1]) and torch.allclose(dense, probs_map[0])

    ok["softmax top-k"] = same_routing(
        our_router.topk_route(logits, k), mg.topk_routing_with_score_function(logits, k)
    )
    ok["sigmoid top-k with bias"] = same_routing(
        our_router.topk_route(logits, k, "sigmoid", bias),
        mg.topk_routing_with_score_function(logits, k, score_function="sigmoid", expert_bias=bias),
    )
    ok["group-limited top-k"] = same_routing(
        our_router.topk_route(logits, k, "sigmoid", bias, groups=4, group_topk=2),
        mg.topk_routing_with_score_function(
            logits, k, num_groups=4, group_topk=2, score_function="sigmoid", expert_bias=bias
        ),
    )
    _, experts = our_router.topk_route(logits, k)
    probs = torch.softmax(logits, -1)
    theirs = mg.switch_load_balancing_loss_func(
        probs, our_router.load_of(experts, e).double(), t, k, e, 1.0
    )
    ok["auxiliary loss"] = torch.allclose(our_router.aux_loss(probs, experts, k), theirs)
    seq_len, bsz = 16, 4  # tokens laid out [seq, batch], as Megatron's router sees them
    sb_logits = logits.view(seq_len, bsz, e)
    sb_map, sb_scores = mg.compute_routing_scores_for_aux_loss(logits, k, "softmax")
    seq_theirs = mg.switch_load_balancing_loss_func(
        sb_scores.reshape(seq_len, -1), sb_map.reshape(seq_len, -1).sum(0).double(),
        seq_len, k, e, 1.0,
    ) / bsz
    by_seq = sb_logits.transpose(0, 1).reshape(-1, e)  # sequence after sequence
    _, seq_experts = our_router.topk_route(by_seq, k)
    seq_ours = our_router.seq_aux_loss(torch.softmax(by_seq, -1), seq_experts, k, seq_len)
    ok["sequence-wise loss"] = torch.allclose(seq_ours, seq_theirs)
    ok["z-loss"] = torch.allclose(our_router.z_loss(logits), mg.z_loss_func(logits, 1.0))
    load = our_router.load_of(experts, e).double()
    ok["bias update"] = torch.allclose(
        our_router.update_bias(bias, load, 1e-3),
        mg.get_updated_expert_bias(load.clone(), bias, 1e-3, tp_dp_cp_group=dist.group.WORLD),
    )
    for cf in (0.5, 1.0, 1.5):
        cap = our_router.capacity(t, e, k, cf)
        ok[f"capacity {cf}"] = cap == mg.get_capacity(t * k, e, cf)
        gates, experts = our_router.topk_route(logits, k)
        probs_map = mg.topk_routing_with_score_function(logits, k)
        _, kept_map = mg.apply_router_token_dropping(*probs_map, k, cf, drop_policy="probs")
        keep = our_router.keep_within_capacity(gates, experts, e, cap, "probs")
        ours_map = torch.zeros(t, e, dtype=torch.bool)
        ours_map[torch.arange(t).unsqueeze(1).expand(t, k)[keep], experts[keep]] = True
        ok[f"dropping {cf}"] = torch.equal(ours_map, kept_map)
    return ok


# -- dispatch and combine on four ranks ---------------------------------------------------------
def ep_dispatch_check(
    rank: int, world_size: int, max_nodes: int, tokens: int = 256, k: int = 4, hidden: int = 8
) -> dict[str, Any]:
    """Route ``tokens`` tokens per rank to 16 experts on 2 nodes x 2 ranks, node-limited to
    ``max_nodes``; dispatch flat and hierarchically, compute, combine; compare with the dense
    layer, with the layout's counts, and with DeepEP's reference dispatch at the pin."""
    topo = ep.Topology(num_experts=16, nodes=2, ranks_per_node=world_size // 2)
    shape = MoEShape(hidden=hidden, ffn=16, experts=topo.num_experts, topk=k)
    w = init_weights(shape, seed=0)
    gen = torch.Generator().manual_seed(100 + rank)
    x = torch.randn(tokens, hidden, generator=gen, dtype=torch.float64)
    logits = torch.randn(tokens, topo.num_experts, generator=gen, dtype=torch.float64)
    gates, experts = our_router.topk_route(logits, k, "sigmoid", groups=topo.nodes, group_topk=max_nodes)
    layout = ep.dispatch_layout(experts, topo)
    weights = (w.gate, w.up, w.down)

    # the dense answer for this rank's tokens: every expert local
    dense = torch.zeros_like(x)
    for e in range(topo.num_experts):
        tok, slot = (experts == e).nonzero(as_tuple=True)
        if tok.numel():
            from atlas.labkit.moe.layer import swiglu

            dense = dense.index_add(0, tok, swiglu(x[tok], w.gate[e], w.up[e], w.down[e]) * gates[tok, slot, None])

    out: dict[str, Any] = {}
    for name, disp, comb in (
        ("flat", ep.flat_dispatch, ep.combine),
        ("hierarchical", ep.hierarchical_dispatch, ep.hierarchical_combine),
    ):
        tr_d, tr_c = ep.Traffic(), ep.Traffic()
        rx, re_, rg, rsrc = disp(x, experts, gates, topo, tr_d)
        y = ep.expert_compute(rx, re_, rg, weights, topo)
        result = comb(y, rsrc, tokens, topo, tr_c)
        out[name] = {
            "combine_ok": torch.allclose(result, dense, rtol=1e-10, atol=1e-12),
            "received": rx.shape[0],
            "dispatch": (tr_d.nvlink, tr_d.rdma),
            "combine": (tr_c.nvlink, tr_c.rdma),
        }
        order = torch.argsort(rsrc[:, 0] * tokens + rsrc[:, 1])
        out[name]["rows"] = (rsrc[order], rx[order])

    me_node = topo.node_of(rank)
    per_rank, per_node = layout["tokens_per_rank"], layout["tokens_per_node"]
    model = {
        "flat": (
            sum(int(per_rank[r]) for r in range(topo.ranks) if r != rank and topo.node_of(r) == me_node),
            sum(int(per_rank[r]) for r in range(topo.ranks) if topo.node_of(r) != me_node),
        ),
        "hierarchical_rdma": sum(int(per_node[n]) for n in range(topo.nodes) if n != me_node),
        "per_assignment_rdma": int((experts // (topo.experts_per_rank * topo.ranks_per_node) != me_node).sum()),
    }
    same_rows = torch.equal(out["flat"]["rows"][0], out["hierarchical"]["rows"][0]) and torch.equal(
        out["flat"]["rows"][1], out["hierarchical"]["rows"][1]
    )
    refs = load_deepep_refs()  # absent objects skip the lab, from inside the rank too
    rx_ref, ridx_ref, _, rsrc_ref, nrecv_ref = refs.dispatch(x, experts, gates, tokens, topo.num_experts)
    flat_src, flat_x = out["flat"]["rows"]
    src_global = flat_src[:, 0] * tokens + flat_src[:, 1]
    deepep_ok = torch.equal(rsrc_ref.long(), src_global) and torch.equal(rx_ref, flat_x)
    remote = ep.expected_remote_nodes(topo.num_experts, k, topo.nodes, max_nodes)
    return {
        "combine_ok": out["flat"]["combine_ok"] and out["hierarchical"]["combine_ok"],
        "same_rows": same_rows,
        "flat_matches_model": out["flat"]["dispatch"] == model["flat"],
        "rdma_matches_model": out["hierarchical"]["dispatch"][1] == model["hierarchical_rdma"],
        "deepep_ok": deepep_ok,
        "flat": out["flat"]["dispatch"],
        "hierarchical": out["hierarchical"]["dispatch"],
        "hierarchical_combine": out["hierarchical"]["combine"],
        "per_assignment_rdma": model["per_assignment_rdma"],
        "remote_per_token": model["hierarchical_rdma"] / tokens,
        "remote_expected": remote,
    }


# -- EPLB ----------------------------------------------------------------------------------------
def eplb_matches_upstream(
    load: torch.Tensor, replicas: int, groups: int, nodes: int, gpus: int
) -> dict[str, Any]:
    """Our placement against EPLB's ``rebalance_experts`` at the pin, on one layer's loads.

    ``counts``: the same number of copies of every expert. ``loads``: the same load on the GPUs
    of each node, up to their order (to 1e-6 relative). EPLB sorts with ``torch.sort``, which
    may order equal weights (two copies of one expert) differently from our stable sort, and
    sums in float32, so equally good plans can put a copy on a different GPU of the same node.
    ``exact``: the same physical-to-logical map, slot by slot.
    """
    mod = load_eplb()
    theirs, _, count = mod.rebalance_experts(load.view(1, -1), replicas, groups, nodes, gpus)
    theirs = theirs[0].tolist()
    ours = our_eplb.rebalance(load, replicas, groups, nodes, gpus)
    per_gpu, per_node = replicas // gpus, gpus // nodes
    values = [float(v) for v in load]

    def node_loads(phy2log: list[int]) -> list[list[float]]:
        gpu = [
            sum(values[e] / ours.count[e] for e in phy2log[g * per_gpu : (g + 1) * per_gpu])
            for g in range(gpus)
        ]
        return [sorted(gpu[n * per_node : (n + 1) * per_node]) for n in range(nodes)]

    counts_ok = ours.count == count[0].tolist()
    loads_ok = counts_ok and all(
        abs(a - b) <= 1e-6 * max(abs(a), 1.0)
        for na, nb in zip(node_loads(ours.phy2log), node_loads(theirs))
        for a, b in zip(na, nb)
    )
    return {"counts": counts_ok, "loads": loads_ok, "exact": ours.phy2log == theirs}


def moe_flops_measured(shape: MoEShape, tokens: int) -> int:
    """Matmul FLOPs of one forward of the layer, counted by PyTorch's FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    w = init_weights(shape)
    x = torch.randn(tokens, shape.hidden, dtype=torch.float64)
    with FlopCounterMode(display=False) as counter:
        moe_forward(x, w, shape)
    return counter.get_total_flops()


def skewed_counts(total: int, groups: int, s: float, seed: int = 0) -> list[int]:
    """``total`` rows spread over ``groups`` experts by sampling a ``1 / rank**s`` law
    (``s = 0``: uniform sampling), sorted from the busiest expert down."""
    gen = torch.Generator().manual_seed(seed)
    p = 1 / torch.arange(1, groups + 1, dtype=torch.float64) ** s
    draws = torch.multinomial(p / p.sum(), total, replacement=True, generator=gen)
    return sorted(torch.bincount(draws, minlength=groups).tolist(), reverse=True)


def grouped_gemm_variants_agree(counts: list[int], block_m: int = 16, seed: int = 0) -> dict[str, bool]:
    """Forward and backward of the four layouts against the per-expert loop (float64), and
    PyTorch's own ``grouped_mm`` with offsets against the loop (float32, non-empty groups)."""
    import torch.nn.functional as F

    from atlas.labkit.moe import grouped_gemm as gg

    gen = torch.Generator().manual_seed(seed)
    k, n, g = 32, 24, len(counts)
    x = torch.randn(sum(counts), k, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(g, k, n, dtype=torch.float64, generator=gen, requires_grad=True)
    dy = torch.randn(sum(counts), n, dtype=torch.float64, generator=gen)

    def run(fn: Any) -> tuple[torch.Tensor, ...]:
        y = fn(x, w)
        return (y, *torch.autograd.grad(y, (x, w), dy))

    def contiguous(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        a, m_indices, pos = gg.to_contiguous(x, counts, block_m)
        return gg.contiguous_grouped_gemm(a, w, m_indices, block_m)[pos]

    def masked(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        a, idx = gg.to_masked(x, counts)
        return gg.masked_grouped_gemm(a, w, counts, block_m)[idx]

    ref = run(lambda x, w: gg.loop_reference(x, w, counts))

    def same(other: tuple[torch.Tensor, ...], tol: float = 1e-12) -> bool:
        return all(torch.allclose(a, b, rtol=tol, atol=tol) for a, b in zip(ref, other))

    out = {
        "padded bmm": same(run(lambda x, w: gg.padded_bmm(x, w, counts))),
        "contiguous": same(run(contiguous)),
        "masked": same(run(masked)),
    }
    nz = [m for m in counts if m > 0]
    x32 = torch.randn(sum(nz), k, generator=gen, requires_grad=True)
    w32 = torch.randn(len(nz), k, n, generator=gen, requires_grad=True)
    dy32 = torch.randn(sum(nz), n, generator=gen)
    offs = torch.tensor(nz).cumsum(0).to(torch.int32)
    y_t = F.grouped_mm(x32, w32, offs=offs)
    y_l = gg.loop_reference(x32, w32, nz)
    grads_t = torch.autograd.grad(y_t, (x32, w32), dy32)
    grads_l = torch.autograd.grad(y_l, (x32, w32), dy32)
    out["torch grouped_mm"] = all(
        torch.allclose(a, b, rtol=1e-4, atol=1e-4) for a, b in zip((y_t, *grads_t), (y_l, *grads_l))
    )
    return out
