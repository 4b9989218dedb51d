"""Checks of the labs of ``moe/routing.md``.

The chapter's checks: the upstreams' own code at the pin, and the checks.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union

import torch
import torch.distributed as dist

from atlas.labkit.moe import router as our_router
from atlas.labkit.pinned import Definitions, definitions

ROLE = "check"


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
    "torch": torch,
    "math": math,
    "Optional": Optional,
    "Tuple": tuple,
    "List": list,
    "Union": Union,
    "HAVE_TE": False,
    "RouterReplay": None,
    "parallel_state": None,
    "is_te_min_version": lambda *_: False,
    "fused_moe_aux_loss": None,
    "fused_topk_with_score_function": None,
    "fused_compute_score_for_moe_aux_loss": None,
}


def load_megatron_router() -> Definitions:
    """Megatron-LM's routing functions from ``moe_utils.py`` at the pin, cut out by ``ast`` and
    run with Transformer Engine absent (``HAVE_TE = False``), as on a machine without it."""
    return definitions(
        "megatron", MEGATRON_MOE_UTILS, MEGATRON_ROUTER_FUNCTIONS, dict(_MEGATRON_ROUTER_GLOBALS)
    )


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
    seq_theirs = (
        mg.switch_load_balancing_loss_func(
            sb_scores.reshape(seq_len, -1),
            sb_map.reshape(seq_len, -1).sum(0).double(),
            seq_len,
            k,
            e,
            1.0,
        )
        / bsz
    )
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
