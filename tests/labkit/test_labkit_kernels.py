"""Unit tests of atlas.labkit.kernels: Triton kernels under the interpreter, models, layouts."""

from __future__ import annotations

import math
import os

import pytest
import torch
from atlas.labkit.checks.common.attention import causal_attention
from atlas.labkit.checks.kernels.common import trace_memory
from atlas.labkit.checks.kernels.index import first_warp_addresses, occupancy_by_placement
from atlas.labkit.checks.kernels.overlap import pipeline_formula, ring_gemms_match
from atlas.labkit.kernels import cute
from atlas.labkit.kernels.cute import (
    Layout,
    Swizzle,
    coalesce,
    complement,
    composition,
    composition_by_mode,
    logical_divide,
    logical_product,
)
from atlas.labkit.kernels.flash import attention_hbm_bytes, flash_attention
from atlas.labkit.kernels.gpu_model import bank_wavefronts, occupancy, warp_transactions
from atlas.labkit.kernels.matmul import matmul, tile_intensity, tile_order, tiles_loaded_by_wave
from atlas.labkit.kernels.overlap import persistent_schedule, pipeline
from atlas.labkit.kernels.triton_basics import add, layer_norm, softmax, strided_copy
from atlas.labkit.registry.sm import sm_limits


def test_interpreter_is_on():
    import triton

    assert os.environ["TRITON_INTERPRET"] == "1"
    assert triton.knobs.runtime.interpret


def test_first_kernels_equal_torch():
    torch.manual_seed(0)
    x, y = torch.randn(1000), torch.randn(1000)
    assert torch.equal(add(x, y, block=128), x + y)
    a = torch.randn(5, 77) * 10
    assert torch.allclose(softmax(a), torch.softmax(a, -1), atol=1e-6)
    w, b = torch.randn(77), torch.randn(77)
    out, mean, rstd = layer_norm(a, w, b)
    assert torch.allclose(out, torch.nn.functional.layer_norm(a, (77,), w, b), atol=1e-5)
    assert torch.allclose(mean, a.mean(-1), atol=1e-5)


@pytest.mark.parametrize("shape", [(64, 64, 64, 32, 32, 16), (37, 53, 29, 16, 32, 16)])
def test_matmul_equals_torch(shape):
    m, n, k, bm, bn, bk = shape
    a, b = torch.randn(m, k), torch.randn(k, n)
    assert torch.allclose(matmul(a, b, bm, bn, bk), a @ b, atol=1e-4)


def test_grouped_order_covers_every_tile_once_and_reuses():
    order = tile_order(7, 5, 3)
    assert sorted(order) == [(m, n) for m in range(7) for n in range(5)]
    assert tiles_loaded_by_wave(tile_order(9, 9, 1), 9, 9) == 90
    assert tiles_loaded_by_wave(tile_order(9, 9, 3), 9, 9) == 54
    assert tile_intensity(128, 128, 64, 2) == 64.0


def test_matmul_loads_match_tile_formula():
    a, b = torch.randn(64, 48), torch.randn(48, 64)
    with trace_memory() as trace:
        matmul(a, b, 32, 32, 16)
    per_program = (32 * 48 + 48 * 32) * 4
    assert trace.bytes("load", (0, 0, 0)) == per_program
    assert trace.bytes("store") == 64 * 64 * 4


@pytest.mark.parametrize("causal", [False, True])
def test_flash_equals_naive(causal):
    q, k, v = torch.randn(2, 37, 32), torch.randn(2, 53, 32), torch.randn(2, 53, 32)
    o, lse = flash_attention(q, k, v, causal=causal)
    s = q @ k.transpose(1, 2) / math.sqrt(32)
    if causal:
        i, j = torch.arange(37)[:, None], torch.arange(53)[None, :]
        s = s.masked_fill(j > i + 53 - 37, float("-inf"))
    assert torch.allclose(o, torch.softmax(s, -1) @ v, atol=1e-5)
    assert torch.allclose(lse, torch.logsumexp(s, -1), atol=1e-5)
    if causal:
        ref = causal_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1))
        assert torch.allclose(o, ref.transpose(0, 1), atol=1e-5)


def test_flash_traffic_matches_formula():
    q, k, v = (torch.randn(1, 64, 16) for _ in range(3))
    with trace_memory() as trace:
        flash_attention(q, k, v, block_m=16, block_n=16)
    expected = attention_hbm_bytes(64, 16, 16, 4)["flash"]
    assert trace.bytes() == expected


@pytest.mark.parametrize("stride", [1, 2, 4, 8, 32])
def test_coalescing_from_traced_addresses(stride):
    x = torch.randn(128 * 32)
    with trace_memory() as trace:
        assert torch.equal(strided_copy(x, 128, stride), x[::stride][:128])
    sectors = warp_transactions(first_warp_addresses(trace), 4)
    assert sectors == [min(32, 4 * stride)] * 4


def test_banks_and_swizzle():
    rows = [t * 64 + 0 * 8 for t in range(8)]  # 8 rows of a 64-element fp16 tile, chunk 0
    assert bank_wavefronts([2 * o for o in rows], access_bytes=16) == 8
    sw = Swizzle(3, 3, 3)
    assert bank_wavefronts([2 * sw(o) for o in rows], access_bytes=16) == 1
    assert sorted(sw(i) for i in range(512)) == list(range(512))
    assert bank_wavefronts([4 * t for t in range(32)]) == 1
    assert bank_wavefronts([4 * 2 * t for t in range(32)]) == 2
    assert bank_wavefronts([4 * 32 * t for t in range(32)]) == 32
    assert bank_wavefronts([0] * 32) == 1  # broadcast


@pytest.mark.parametrize(
    "args",
    [
        (256, 32, 0),
        (256, 33, 0),
        (128, 128, 49152),
        (384, 168, 100000),
        (1024, 64, 0),
        (64, 40, 200000),
    ],
)
def test_occupancy_agrees_with_placement(args):
    sm = sm_limits("H100-SXM")
    assert occupancy(*args, sm).blocks == occupancy_by_placement(*args, sm)
    assert occupancy(256, 32, 0, sm).occupancy == 1.0


def test_layout_algebra_reproduces_cute_examples():
    L = Layout
    assert repr(composition(L((6, 2), (8, 2)), L((4, 3), (3, 1)))) == "((2,2),3):((24,2),8)"
    assert repr(composition(L(20, 2), L((5, 4), (4, 1)))) == "(5,4):(8,2)"
    assert repr(composition(L((10, 2), (16, 4)), L((5, 4), (1, 5)))) == "(5,(2,2)):(16,(80,4))"
    assert repr(complement(L(4, 2), 24)) == "(2,3):(1,8)"
    assert repr(complement(L((2, 2), (1, 6)), 24)) == "(3,2):(2,12)"
    assert repr(complement(L((4, 6), (1, 4)), 24)) == "1:0"
    assert repr(logical_divide(L((4, 2, 3), (2, 1, 8)), L(4, 2))) == "((2,2),(2,3)):((4,1),(2,8))"
    assert repr(logical_product(L((2, 2), (4, 1)), L(6, 1))) == "((2,2),(2,3)):((4,1),(2,8))"
    assert repr(coalesce(L((2, (1, 6)), (1, (6, 2))))) == "12:1"
    tiled = composition_by_mode(L((12, (4, 8)), (59, (13, 1))), (L(3, 4), L(8, 2)))
    assert repr(tiled) == "(3,(2,4)):(236,(26,1))"


def test_composition_is_function_composition():
    for a, b in [
        (Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1))),
        (Layout((4, 2, 3), (2, 1, 8)), Layout((2, 3), (4, 8))),
    ]:
        r = composition(a, b)
        assert all(r(i) == a(b(i)) for i in range(b.size()))
    a = Layout((2, 2), (1, 6))
    c = complement(a, 24)
    both = cute.make_layout(a, c)
    assert sorted(both(i) for i in range(both.size())) == list(range(24))


def test_pipeline_and_persistent_schedule():
    for n, m, c in [(4, 1.0, 2.0), (8, 3.0, 1.0), (1, 2.0, 2.0)]:
        assert pipeline([m] * n, [c] * n).makespan == pipeline_formula(n, m, c)
        assert pipeline([m] * n, [c] * n, comm_first=False).makespan == pipeline_formula(n, m, c)
    sched = persistent_schedule(10, 4)
    assert sched == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]


def test_ring_gemms_equal_dense():
    assert ring_gemms_match(world=3) == (True, True)
