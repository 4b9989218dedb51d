"""Fast checks of atlas.labkit.moe (no Sphinx): each taught module against an independent fact."""

from __future__ import annotations

import math

import pytest
import torch
from atlas.labkit.checks.moe.common import moe_flops_measured
from atlas.labkit.checks.moe.deepep import ep_dispatch_check
from atlas.labkit.checks.moe.grouped_gemm import grouped_gemm_variants_agree
from atlas.labkit.moe import capacity, dispatch, eplb, granularity, grouped_gemm, layer, router


def test_softmax_topk_gates_are_renormalised_probabilities() -> None:
    logits = torch.randn(32, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    gates, experts = router.topk_route(logits, 2)
    probs = torch.softmax(logits, -1).gather(1, experts)
    assert torch.allclose(gates, probs / probs.sum(-1, keepdim=True))


def test_bias_moves_the_choice_but_not_the_gates() -> None:
    logits = torch.zeros(4, 4, dtype=torch.float64)
    bias = torch.tensor([0.0, 0.0, 0.0, 1.0], dtype=torch.float64)
    gates, experts = router.topk_route(logits, 1, "sigmoid", bias)
    assert experts.flatten().tolist() == [3, 3, 3, 3]
    assert torch.allclose(gates, torch.full((4, 1), 0.5, dtype=torch.float64))


def test_group_limited_routing_stays_in_its_groups() -> None:
    logits = torch.randn(64, 16, generator=torch.Generator().manual_seed(1))
    _, experts = router.topk_route(logits, 4, "sigmoid", groups=4, group_topk=1)
    assert (experts // 4 == experts[:, :1] // 4).all()


def test_aux_loss_is_one_when_uniform_and_bias_update_signs() -> None:
    probs = torch.full((8, 4), 0.25, dtype=torch.float64)
    experts = torch.arange(8).view(8, 1) % 4
    assert math.isclose(router.aux_loss(probs, experts, 1).item(), 1.0)
    bias = router.update_bias(torch.zeros(3), torch.tensor([5, 1, 3]), 0.1)
    assert bias.tolist() == pytest.approx([-0.1, 0.1, 0.0])


def test_capacity_keeps_at_most_cap_per_expert() -> None:
    gen = torch.Generator().manual_seed(2)
    gates, experts = router.topk_route(torch.randn(50, 6, generator=gen), 2)
    for policy in ("probs", "position"):
        keep = router.keep_within_capacity(gates, experts, 6, 5, policy)
        assert torch.bincount(experts[keep], minlength=6).max() <= 5


def test_drop_formula_matches_simulation() -> None:
    exact = capacity.expected_drop_fraction(64, [0.25] * 8, 2, 1.0)
    sampled = capacity.simulated_drop_fraction(64, 8, 2, 1.0, trials=2000)
    assert abs(exact - sampled) < 0.005


def test_layer_flops_and_params() -> None:
    assert moe_flops_measured(layer.MoEShape(16, 8, 4, 2, 1), 10) == 10 * layer.flops_per_token(
        layer.MoEShape(16, 8, 4, 2, 1)
    )
    assert layer.params(layer.MoEShape(16, 8, 4, 2, 1)) == {"total": 1984, "active": 1216}


def test_fine_grained_slices_sum_to_the_coarse_expert() -> None:
    shape = layer.MoEShape(8, 12, 4, 2)
    w = layer.init_weights(shape)
    x = torch.randn(5, 8, dtype=torch.float64)
    top = (x @ w.router.T).topk(2)
    gates, experts = top.values.softmax(-1), top.indices
    fine = granularity.split_experts(w, 3)
    assert torch.allclose(
        granularity.routed_output(x, w, gates, experts),
        granularity.routed_output(x, fine, *granularity.fine_routes(gates, experts, 3)),
    )
    assert granularity.expected_distinct_ranks(64, 2, 64) == pytest.approx(2.0)


def test_grouped_gemm_layouts_agree_with_the_loop() -> None:
    assert all(grouped_gemm_variants_agree([9, 0, 17, 3], block_m=4).values())
    assert grouped_gemm.tiles([10, 1], 8, "padded") == 4
    assert grouped_gemm.tiles([10, 1], 8, "contiguous") == 3


def test_eplb_reproduces_the_readme_example() -> None:
    layer0 = torch.tensor([90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86])
    assert eplb.rebalance(layer0, 16, 4, 2, 8).phy2log == [
        5,
        6,
        5,
        7,
        8,
        4,
        3,
        4,
        10,
        9,
        10,
        2,
        0,
        1,
        11,
        1,
    ]


def test_low_latency_bytes() -> None:
    assert dispatch.low_latency_bytes(1, 1, 7168, "dispatch") == 7408
    assert dispatch.low_latency_bytes(2, 3, 7168, "combine") == 6 * 14336


def test_dispatch_on_four_ranks_equals_dense() -> None:
    from atlas.labkit import run_ranks

    results = run_ranks(ep_dispatch_check, 4, 1, 32, timeout=120)
    for r in results:
        assert (
            r["combine_ok"]
            and r["same_rows"]
            and r["flat_matches_model"]
            and r["rdma_matches_model"]
        )
