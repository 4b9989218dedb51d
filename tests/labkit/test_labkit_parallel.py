"""atlas.labkit.parallel: the reference implementations the parallelism chapter's labs run.

Multi-rank checks share one ``run_ranks`` call (a module fixture), because a 4-rank start costs
seconds on a loaded machine; each test then asserts one claim on its part of the results. The
negative tests break one piece (the backward of ``f``, the ring merge) and check that the
comparison notices.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from atlas.labkit import run_ranks
from atlas.labkit.checks.parallel.common import measured_activation_bytes
from atlas.labkit.checks.parallel.context import (
    ring_attention_matches_full,
    sdpa_causal,
    ulysses_matches_full,
)
from atlas.labkit.checks.parallel.data import (
    clipping_matches_dense,
    data_parallel_matches_reference,
    hsdp_matches_dense,
    matrix_update_shards,
    train_reference,
    zero_memory_matches_ledger,
)
from atlas.labkit.checks.parallel.expert import ep_moe_matches_reference, router_gradient
from atlas.labkit.checks.parallel.index import measured_bytes_per_param, megatron_rank_groups
from atlas.labkit.checks.parallel.tensor import parallel_mlp_matches_dense
from atlas.labkit.parallel import context, expert, memory, pipeline, tensor
from atlas.labkit.pinned import UpstreamUnavailable

# What the parallelism pages' labs assert (every DDP/ZeRO stage reaches the single-process
# parameters with the ledger's memory and traffic, TP/SP match dense with their collectives,
# the executed schedules match sequential training with their peaks, ring and Ulysses match full
# attention, expert parallelism matches one process) is run by the book's build and by
# ``ATLAS_LABS=parallelism pytest tests/test_labkit_labs.py``; it is not repeated here.


def _broken(rank: int, world: int) -> dict[str, bool]:
    """The checks must notice a missing backward all-reduce and a wrong softmax merge."""
    tensor.CopyToTP.backward = staticmethod(lambda ctx, grad: (grad, None))  # f, no all-reduce
    context.merge = lambda out, lse, out_b, lse_b: (out + out_b, torch.logaddexp(lse, lse_b))
    return {
        "tp_backward_ok": parallel_mlp_matches_dense(rank, world)["backward_ok"],
        "ring_ok": ring_attention_matches_full(rank, world, True, seq=16)["ok"],
    }


def test_checks_detect_broken_implementations() -> None:
    results = run_ranks(_broken, 2, timeout=60)  # the patches live only in the forked ranks
    assert not any(r["tp_backward_ok"] for r in results)
    assert not any(r["ring_ok"] for r in results)


@pytest.mark.parametrize(
    ("kind", "v"), [("gpipe", 1), ("1f1b", 1), ("interleaved", 2), ("interleaved", 4)]
)
@pytest.mark.parametrize(("p", "m"), [(2, 4), (4, 4), (4, 8), (8, 16)])
def test_simulated_bubble_equals_formula(kind: str, v: int, p: int, m: int) -> None:
    assert pipeline.simulate(kind, p, m, v).bubble == pytest.approx(
        pipeline.bubble_formula(kind, p, m, v), abs=1e-12
    )


def test_schedule_contains_every_pass_once() -> None:
    for kind, v in (("gpipe", 1), ("1f1b", 1), ("interleaved", 3)):
        for ops in pipeline.schedule(kind, 4, 8, v):
            expected = {(k, mb, c) for k in "FB" for mb in range(8) for c in range(v)}
            assert sorted(ops) == sorted(pipeline.Op(*e) for e in expected)


def test_schedule_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown schedule"):
        pipeline.schedule("zigzag", 4, 8)
    with pytest.raises(ValueError, match="m divisible by p"):
        pipeline.schedule("interleaved", 4, 6, 2)
    with pytest.raises(ValueError, match="one chunk per stage"):
        pipeline.schedule("1f1b", 4, 8, 2)


def test_merge_of_partial_attention_is_exact() -> None:
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(6, 2, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    pos = torch.arange(6)
    full, lse_full = context.block_attention(q, k, v, pos, pos)
    a = context.block_attention(q, k[:2], v[:2], pos, pos[:2])
    b = context.block_attention(q, k[2:], v[2:], pos, pos[2:])
    out, lse = context.merge(*a, *b)
    assert torch.allclose(out, full) and torch.allclose(lse, lse_full)


def test_balanced_positions_cover_the_sequence() -> None:
    got = [context.shard_positions(32, r, 4, True).tolist() for r in range(4)]
    assert got[0] == [0, 1, 2, 3, 28, 29, 30, 31]
    assert sorted(sum(got, [])) == list(range(32))


def test_ledger_is_sixteen_bytes_per_parameter() -> None:
    n = 10**9
    assert memory.ledger(n)["total"] * memory.GIB == pytest.approx(16 * n)
    assert memory.ledger(n, dp=8, zero_stage=3)["total"] * memory.GIB == pytest.approx(2 * n)
    assert memory.LLAMA2_7B.params() == 6_738_415_616
    with pytest.raises(ValueError, match="zero_stage"):
        memory.ledger(n, zero_stage=4)


def test_rank_groups_fold_first_dimension_fastest() -> None:
    sizes = {"tp": 2, "dp": 3, "pp": 4}
    dp = memory.rank_groups(sizes, "dp")
    assert dp[:2] == [[0, 2, 4], [1, 3, 5]] and dp[-1] == [19, 21, 23]
    assert memory.rank_groups(sizes, "tp")[0] == [0, 1]
    assert memory.rank_groups(sizes, "pp")[0] == [0, 6, 12, 18]
    tp_pp = memory.rank_groups(sizes, "tp-pp")
    assert len(tp_pp) == 3 and tp_pp[0] == [0, 1, 6, 7, 12, 13, 18, 19]
    for dims in ("tp", "dp", "pp", "tp-pp"):  # every rank in exactly one group
        assert sorted(r for g in memory.rank_groups(sizes, dims) for r in g) == list(range(24))
    with pytest.raises(ValueError, match="unknown dimension"):
        memory.rank_groups(sizes, "cp")


def test_capacity_drops_in_token_order() -> None:
    x = torch.zeros(6, 4, dtype=torch.float64)
    router = torch.zeros(3, 4, dtype=torch.float64)
    router[0, 0] = 1.0
    x[:, 0] = 1.0  # every token prefers expert 0
    token, chosen, _, _, _ = expert.route(x, router, 1, capacity_factor=1.0)
    assert token.tolist() == [0, 1] and chosen.tolist() == [0, 0]  # capacity ceil(6/3) = 2


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown method 'zero4'"):
        data_parallel_matches_reference(0, 4, "zero4")
    with pytest.raises(ValueError, match="not divisible by 3 ranks"):
        data_parallel_matches_reference(0, 3, "ddp")
    with pytest.raises(ValueError, match="do not split over 3 ranks"):
        ep_moe_matches_reference(0, 3)
    with pytest.raises(ValueError, match="heads"):
        ulysses_matches_full(0, 3)


def test_zero2_keeping_full_gradients_is_noticed() -> None:
    """The measurement, not the shapes, decides: a ZeRO-2 run that kept its full gradients
    holds n + n/4 gradient elements and fails the ledger check."""
    run = {"numel": 100, "held": {"params": 100, "grads": 125, "moments": 50, "master": 25}}
    assert not zero_memory_matches_ledger(run, "zero2", 4)
    run["held"]["grads"] = 25
    assert zero_memory_matches_ledger(run, "zero2", 4)


def test_sdpa_reference_is_causal_attention() -> None:
    from atlas.labkit.checks.common.attention import causal_attention

    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(10, 2, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    assert torch.allclose(sdpa_causal(q, k, v), causal_attention(q, k, v))


def test_renormalised_top1_gate_gives_no_router_gradient() -> None:
    assert router_gradient(1, "renormalized") < 1e-12
    assert router_gradient(1, "raw") > 1
    with pytest.raises(ValueError, match="gates must be one of"):
        expert.route(torch.zeros(2, 4), torch.zeros(3, 4), 1, None, gates="softmax")


@pytest.mark.parametrize(("kind", "v"), [("gpipe", 1), ("1f1b", 1), ("interleaved", 2)])
@pytest.mark.parametrize(("p", "m"), [(2, 4), (4, 8), (8, 16)])
def test_peaks_and_bubble_ratio_equal_formulas(kind: str, v: int, p: int, m: int) -> None:
    sim = pipeline.simulate(kind, p, m, v)
    assert sim.peak_activations == [pipeline.peak_formula(kind, p, m, s, v) for s in range(p)]
    busy = m * 3.0
    ratio = (sim.total - busy) / busy
    assert ratio == pytest.approx(pipeline.bubble_ratio_formula(kind, p, m, v), abs=1e-12)


@pytest.mark.parametrize(("tp", "sp"), [(1, False), (2, False), (4, True)])
def test_measured_activations_equal_korthikanti(tp: int, sp: bool) -> None:
    got = measured_activation_bytes(32, 2, 64, 8, tp=tp, sp=sp)
    assert got["total"] - got["norm_stats"] == memory.activation_bytes_per_layer(
        32, 2, 64, 8, tp=tp, sp=sp
    )


def test_bytes_per_parameter_are_measured() -> None:
    assert measured_bytes_per_param() == memory.MIXED_ADAM


def test_rank_groups_equal_megatron_rank_generator() -> None:
    try:
        groups = megatron_rank_groups({"tp": 2, "cp": 2, "ep": 1, "dp": 2, "pp": 2}, "dp")
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    assert groups == memory.rank_groups({"tp": 2, "cp": 2, "ep": 1, "dp": 2, "pp": 2}, "dp")


def test_exposed_comm_closed_form() -> None:
    from atlas.labkit.parallel.data import exposed_comm

    for layers, tb, tc in [(1, 1.0, 3.0), (8, 1.0, 0.5), (8, 0.5, 2.0)]:
        assert exposed_comm(layers, tb, tc) == pytest.approx(tc + (layers - 1) * max(0.0, tc - tb))


def _accumulate_clip_hsdp(rank: int, world: int) -> list[Any]:
    train_reference(5, 32)
    return [
        data_parallel_matches_reference(rank, world, "ddp", accumulate=4),
        clipping_matches_dense(rank, world),
        hsdp_matches_dense(rank, world),
    ]


def test_accumulation_clipping_and_hsdp_on_four_ranks() -> None:
    for acc, clip, hsdp in run_ranks(_accumulate_clip_hsdp, 4, timeout=120):
        assert acc["match"] and acc["calls"] == {"all_reduce": acc["buckets"]}
        assert clip["norm_ok"] and clip["clip_ok"]
        assert hsdp["ok"] and hsdp["comm"] == {
            "all_reduce_inter": 500,
            "reduce_scatter_intra": 1000,
        }


def test_matrix_optimizers_do_not_shard() -> None:
    assert matrix_update_shards() == {
        "adam_shards_ok": True,
        "muon_shards_ok": False,
        "muon_gathered_ok": True,
    }


def test_unequal_stages_follow_the_slowest_stage_formula() -> None:
    w = [1.0, 1.0, 1.0, 1.4]  # the last stage is the slowest (the output head)
    for kind in ("gpipe", "1f1b"):
        sim = pipeline.simulate(kind, 4, 8, weights=w)
        assert sim.total == pytest.approx(pipeline.makespan_formula(4, 8, [3 * x for x in w]))
    flops = pipeline.stage_flops([2, 2], 64, 1000, 10, seq=7)
    assert flops[1] - flops[0] == 2 * 10 * 64
