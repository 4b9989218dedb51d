"""Checks of the labs of ``moe/deepep.md``.

The chapter's checks: the upstreams' own code at the pin, and the checks.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from atlas.labkit.moe import dispatch as ep
from atlas.labkit.moe import router as our_router
from atlas.labkit.moe.layer import MoEShape, init_weights
from atlas.labkit.pinned import definitions, module

ROLE = "check"


def load_deepep_refs() -> types.ModuleType:
    """DeepEP's reference dispatch (``deep_ep/utils/refs.py``) at the pin. Its two helper
    imports are supplied here: ``ceil_div`` and a ``get_global_seed`` (used only by a data
    generator the labs do not call); the package's compiled extension is not needed."""
    pkg, utils = types.ModuleType("deep_ep"), types.ModuleType("deep_ep.utils")
    pkg.__path__, utils.__path__ = [], []
    envs, dmath = types.ModuleType("deep_ep.utils.envs"), types.ModuleType("deep_ep.utils.math")
    envs.get_global_seed = lambda: 0  # type: ignore[attr-defined]
    dmath.ceil_div = lambda x, y: (x + y - 1) // y  # type: ignore[attr-defined]
    extra = {
        "deep_ep": pkg,
        "deep_ep.utils": utils,
        "deep_ep.utils.envs": envs,
        "deep_ep.utils.math": dmath,
    }
    return module("deepep", "deep_ep/utils/refs.py", extra)


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
    gates, experts = our_router.topk_route(
        logits, k, "sigmoid", groups=topo.nodes, group_topk=max_nodes
    )
    layout = ep.dispatch_layout(experts, topo)
    weights = (w.gate, w.up, w.down)

    # the dense answer for this rank's tokens: every expert local
    dense = torch.zeros_like(x)
    for e in range(topo.num_experts):
        tok, slot = (experts == e).nonzero(as_tuple=True)
        if tok.numel():
            from atlas.labkit.moe.layer import swiglu

            dense = dense.index_add(
                0, tok, swiglu(x[tok], w.gate[e], w.up[e], w.down[e]) * gates[tok, slot, None]
            )

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
            sum(
                int(per_rank[r])
                for r in range(topo.ranks)
                if r != rank and topo.node_of(r) == me_node
            ),
            sum(int(per_rank[r]) for r in range(topo.ranks) if topo.node_of(r) != me_node),
        ),
        "hierarchical_rdma": sum(int(per_node[n]) for n in range(topo.nodes) if n != me_node),
        "per_assignment_rdma": int(
            (experts // (topo.experts_per_rank * topo.ranks_per_node) != me_node).sum()
        ),
    }
    same_rows = torch.equal(out["flat"]["rows"][0], out["hierarchical"]["rows"][0]) and torch.equal(
        out["flat"]["rows"][1], out["hierarchical"]["rows"][1]
    )
    refs = load_deepep_refs()  # absent objects skip the lab, from inside the rank too
    rx_ref, ridx_ref, _, rsrc_ref, nrecv_ref = refs.dispatch(
        x, experts, gates, tokens, topo.num_experts
    )
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


# -- the published low-latency figures: logical bytes, physical limits ----------------------------
#: DeepEP V1's low-latency table (docs/legacy.md at the pin): EP size -> dispatch latency (us),
#: dispatch GB/s, combine latency (us), combine GB/s. 128 tokens per rank, hidden 7,168, top-8.
LEGACY_LOW_LATENCY = {
    8: (77, 98, 114, 127),
    16: (118, 63, 195, 74),
    32: (155, 48, 273, 53),
    64: (173, 43, 314, 46),
    128: (192, 39, 369, 39),
    256: (194, 39, 360, 40),
}


def deepep_expected_topk(num_experts: int, num_topk: int, num_groups: int) -> float:
    """DeepEP V2's own expected count of distinct groups (ranks or nodes) a token reaches under
    balanced routing, run from ``deep_ep/buffers/elastic.py`` at the pin: the closed form that
    ``ElasticBuffer.get_theoretical_num_sms`` sizes its SM count with. Its two free variables
    (the enclosing method's arguments) are supplied as globals."""
    import math

    scope = definitions(
        "deepep",
        "deep_ep/buffers/elastic.py",
        ["ElasticBuffer.get_theoretical_num_sms.get_expected_topk"],
        {"math": math, "num_experts": num_experts, "num_topk": num_topk},
    )
    return float(scope.get_expected_topk(num_groups))


def low_latency_figures(nic_gbs: float = 50.0, gpus_per_node: int = 8) -> dict[str, Any]:
    """What DeepEP's published low-latency figures can and cannot say.

    ``logical``: the published GB/s equal the test's own accounting (every (token, expert)
    selection counted as one message, ``tests/legacy/test_low_latency.py``) divided by the
    published latency, for every row: true by construction, so it shows the accounting and not
    what is sent. ``nic_gbs_needed``: the bandwidth a NIC would need if, with uniform routing,
    the messages to the other nodes crossed it and the messages to peers of the node went over
    NVLink (the default at the pin): the share of selections whose rank is on another node is
    ``1 - gpus_per_node / EP``. ``all_over_nic_gbs``: the same if every message to another rank
    crossed the NIC (NVLink disabled). Compared with one ~50 GB/s CX7 NIC per GPU.
    """
    d = ep.low_latency_bytes(128, 8, 7168, "dispatch")
    c = ep.low_latency_bytes(128, 8, 7168, "combine")
    logical, needed, all_nic = {}, {}, {}
    for size, (d_us, d_gbs, c_us, c_gbs) in LEGACY_LOW_LATENCY.items():
        logical[size] = all(
            abs(b / t / 1e3 - g) / g < 0.025 for b, t, g in ((d, d_us, d_gbs), (c, c_us, c_gbs))
        )
        remote = 1 - gpus_per_node / size
        other = 1 - 1 / size
        needed[size] = (round(d * remote / d_us / 1e3, 1), round(c * remote / c_us / 1e3, 1))
        all_nic[size] = (round(d * other / d_us / 1e3, 1), round(c * other / c_us / 1e3, 1))
    return {
        "bytes": (d, c),
        "logical": logical,
        "nic_gbs_needed": needed,
        "all_over_nic_gbs": all_nic,
        "fits_nic": {s: max(v) <= nic_gbs for s, v in needed.items()},
        "fits_nic_without_nvlink": {s: max(v) <= nic_gbs for s, v in all_nic.items()},
    }
