"""Unit tests of atlas.labkit.attention: the reference implementations the attention labs run."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from atlas.labkit.attention import cost, decode, flash, linear, mla, partition, sparse
from atlas.labkit.checks.attention.common import max_abs_diff, qkv, randn, rearrange, repeat


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("m,n,bm,bn", [(37, 91, 8, 16), (64, 64, 64, 64), (50, 120, 17, 13)])
def test_tiled_equals_naive(causal, m, n, bm, bn):
    q, k, v = qkv(m, n, 16, 8, lead=(2,), seed=1)
    o, lse = flash.naive_attention(q, k, v, causal)
    o2, lse2 = flash.tiled_attention(q, k, v, bm, bn, causal)
    assert max_abs_diff(o, o2) < 1e-12 and max_abs_diff(lse, lse2) < 1e-12


def test_lazy_rescale_is_exact_and_rescales_less():
    q, k, v = qkv(128, 256, 32, seed=5)
    q = q * 3
    eager, lazy = {}, {}
    o1, _ = flash.tiled_attention(q, k, v, 32, 32, stats=eager)
    o2, _ = flash.tiled_attention(q, k, v, 32, 32, threshold=8 * math.log(2), stats=lazy)
    ref, _ = flash.naive_attention(q, k, v)
    assert max_abs_diff(o1, ref) < 1e-12 and max_abs_diff(o2, ref) < 1e-12
    assert lazy["rescales"] < eager["rescales"]
    assert lazy["max_p"] <= 2**8 + 1e-9 and eager["max_p"] <= 1.0 + 1e-12


@pytest.mark.parametrize("causal", [False, True])
def test_backward_equals_autograd(causal):
    q, k, v = qkv(40, 56, 16, 12, lead=(2,), seed=3)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    o, _ = flash.naive_attention(*leaves, causal)
    do = randn(*o.shape, seed=9)
    o.backward(do)
    o2, lse = flash.tiled_attention(q, k, v, 16, 8, causal)
    grads = flash.flash_backward(q, k, v, o2, lse, do, 16, 8, causal)
    for mine, ref in zip(grads, leaves, strict=True):
        assert max_abs_diff(mine, ref.grad) < 1e-12


@pytest.mark.parametrize("causal", [False, True])
def test_counted_traffic_equals_formula(causal):
    q, k, v = (t.float() for t in qkv(256, 256, 32, 16, seed=0))
    hbm = flash.HBM()
    flash.tiled_attention(q, k, v, 64, 32, causal, hbm=hbm)
    assert hbm.total == flash.tiled_traffic(256, 256, 32, 16, 64, 32, 4, causal)
    hbm = flash.HBM()
    flash.standard_attention(q, k, v, causal, hbm=hbm)
    assert hbm.total == flash.standard_traffic(256, 256, 32, 16, 4)


def test_flops_formula_matches_flop_counter():
    from torch.utils.flop_counter import FlopCounterMode

    q, k, v = qkv(64, 96, 32, 16, lead=(1, 4))
    with FlopCounterMode(display=False) as fc:
        flash.naive_attention(q, k, v)
    assert fc.get_total_flops() == cost.attention_flops(64, 96, 4, 32, 16)
    assert cost.causal_pairs(3, 5) == 12


def test_schedules_reach_their_steady_period():
    for mode in ("serial", "pingpong", "intra"):
        for s in (0.5, 1.0, 2.0):
            sim = partition.simulate_tiles(400, 1.0, s, mode)
            assert abs(sim["time"] / 400 - partition.steady_period(1.0, s, mode)) < 0.01


def test_smem_budget_and_lpt():
    limit = 227 * 1024
    assert partition.max_block_n(256, 256, limit) == 80
    assert partition.max_block_n(192, 192, limit) == 112
    costs = partition.causal_tile_costs(4096, 128, 128) * 8
    assert partition.makespan(costs, 132, "lpt") <= partition.makespan(costs, 132)
    assert partition.wave_efficiency(96, 108) == pytest.approx(96 / 108)


def test_varlen_and_split_kv():
    lengths = [5, 17, 9]
    cu = decode.cu_seqlens(lengths)
    q, k, v = randn(31, 4, 8, seed=1), randn(31, 2, 8, seed=2), randn(31, 2, 8, seed=3)
    o = decode.varlen_attention(q, k, v, cu, cu, causal=True, block_m=4, block_n=4)
    for b in range(len(lengths)):
        s, e = int(cu[b]), int(cu[b + 1])
        ref, _ = flash.naive_attention(
            q[s:e].transpose(0, 1),
            k[s:e].repeat_interleave(2, 1).transpose(0, 1),
            v[s:e].repeat_interleave(2, 1).transpose(0, 1),
            causal=True,
        )
        assert max_abs_diff(o[s:e].transpose(0, 1), ref) < 1e-12
    q, k, v = qkv(1, 1000, 16, lead=(3,), seed=4)
    for splits in (1, 3, 7, 40):
        o, lse = decode.merge_partials(decode.split_kv(q, k, v, splits, block_n=32))
        ref, ref_lse = flash.naive_attention(q, k, v)
        assert max_abs_diff(o, ref) < 1e-12 and max_abs_diff(lse, ref_lse) < 1e-12
    assert decode.num_splits_heuristic(48, 108, 64) == 2


def test_mla_absorbed_equals_naive():
    w = mla.MLAWeights.random(64, 4, 32, 8, 16, 12, seed=0)
    x, pos = randn(20, 64, seed=1), torch.arange(20)
    c, kr = mla.mla_cache(x, w, pos)
    a = mla.mla_naive(x, pos, c, kr, pos, w)
    b = mla.mla_absorbed(x, pos, c, kr, pos, w)
    assert max_abs_diff(a, b) < 1e-12
    bad = mla.mla_naive(x, pos, c, kr, pos, w, rope_content=True)
    assert max_abs_diff(bad, b) > 1e-3


def test_sparse_forms():
    al = sparse.window_allowed(96, 96, left=20, right=0, sinks=4)
    q, k, v = qkv(96, 96, 16, lead=(2,), seed=2)
    ref, _ = flash.naive_attention(q, k, v, allowed=al)
    tiles = sparse.block_mask(al, 16, 16)
    o, _, visited = sparse.block_sparse_attention(q, k, v, tiles, 16, 16, al)
    assert max_abs_diff(o, ref) < 1e-12 and visited == int((tiles > 0).sum())
    cache = sparse.WindowCache(window=20, sinks=4)
    for t in range(96):
        cache.append(t, k[0, t], v[0, t])
        assert max_abs_diff(cache.attend(q[0, t]), ref[0, t]) < 1e-12
    assert len(cache.pos) == 4 + 21
    t = 40
    qh, kh, vh = randn(t, 4, 8, seed=3), randn(t, 1, 8, seed=4), randn(t, 1, 8, seed=5)
    idx = sparse.topk_indices(randn(t, t, seed=6), 10)
    o = sparse.topk_attention(qh, kh, vh, idx)
    allowed = torch.zeros(t, t, dtype=torch.bool)
    for i in range(t):
        allowed[i, idx[i][idx[i] >= 0]] = True
    ref, _ = flash.naive_attention(
        qh.transpose(0, 1),
        kh.expand(t, 4, 8).transpose(0, 1),
        vh.expand(t, 4, 8).transpose(0, 1),
        allowed=allowed,
    )
    assert max_abs_diff(o, ref.transpose(0, 1)) < 1e-12


def test_linear_forms_agree():
    q, k, v = randn(2, 3, 37, 8, seed=1), randn(2, 3, 37, 8, seed=2), randn(2, 3, 37, 6, seed=3)
    k = F.normalize(k, dim=-1)
    gen = torch.Generator().manual_seed(4)
    gv = -0.3 * torch.rand(2, 3, 37, 8, generator=gen, dtype=torch.float64)
    for g in (None, gv[..., :1], gv):
        o1, s1 = linear.linear_recurrent(q, k, v, g)
        o3, s3 = linear.linear_chunkwise(q, k, v, 8, g)
        assert max_abs_diff(o1, linear.linear_parallel(q, k, v, g)) < 1e-12
        assert max_abs_diff(o1, o3) < 1e-12 and max_abs_diff(s1, s3) < 1e-12
    beta = torch.sigmoid(randn(2, 3, 37, seed=5))
    for g in (None, gv[..., 0]):
        o1, s1 = linear.delta_recurrent(q, k, v, beta, g)
        o3, s3 = linear.delta_chunkwise(q, k, v, beta, 8, g)
        assert max_abs_diff(o1, o3) < 1e-12 and max_abs_diff(s1, s3) < 1e-12


def test_fp8_offset_helps():
    q, k, v = qkv(64, 512, 64, seed=0)
    ref, _ = flash.naive_attention(2 * q, k, v)
    err = {off: float((partition.fp8_attention(2 * q, k, v, off) - ref).norm()) for off in (0, 8)}
    assert err[8] < err[0]


def test_einops_shim():
    x = torch.arange(24).reshape(2, 3, 4)
    assert rearrange(x, "a b c -> c (a b)").shape == (4, 6)
    assert torch.equal(repeat(x, "a b c -> a b (c g)", g=2)[..., ::2], x)
    assert rearrange(x, "a (n c) d -> a n c d", c=3).shape == (2, 1, 3, 4)
    assert rearrange(torch.arange(5), "s -> s 1").shape == (5, 1)
