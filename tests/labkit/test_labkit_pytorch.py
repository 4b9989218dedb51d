"""atlas.labkit.pytorch: the PyTorch chapter's taught code, checked without Sphinx.

Each test compares the chapter's restatement of a mechanism with PyTorch itself (strides,
views, matmul copies, saved tensors, Gloo collectives, DTensor, Dynamo's compile count) or
with a closed form (the stream timeline, the caching allocator). Tests that need Inductor's
C++ compiler are left to the labs, which cache their results.
"""

from __future__ import annotations

import pytest
import torch
from atlas.labkit import run_ranks
from atlas.labkit.checks.pytorch.allocator import header_constants
from atlas.labkit.checks.pytorch.autograd import executed_nodes, mlp_block, plain_rms_norm
from atlas.labkit.checks.pytorch.common import dynamo_compiles
from atlas.labkit.checks.pytorch.distributed import collectives_match, mesh_and_dtensor
from atlas.labkit.checks.pytorch.problems import SwiGLU, measured_saved_bytes
from atlas.labkit.checks.pytorch.streams import side_stream_reuse
from atlas.labkit.checks.pytorch.tensors import (
    layout_of,
    layout_predictions_match,
    matmul_copy_table,
    random_matmul_trials,
    random_view_trials,
)
from atlas.labkit.pytorch import allocator as A
from atlas.labkit.pytorch import autograd as ag
from atlas.labkit.pytorch import compile as comp
from atlas.labkit.pytorch import dist, layout, streams
from atlas.labkit.pytorch.dispatch import DecoderLayer, OpLog

# -- tensors and layout ------------------------------------------------------------------------


def test_view_layouts_equal_torch():
    assert all(layout_predictions_match().values())


def test_random_views_and_reshapes_agree_with_torch():
    out = random_view_trials(300, seed=5)
    assert out["chains"] == out["chain_layouts_equal"] == out["view_decisions_equal"] == 300


def test_strides_formulas():
    x = torch.empty(2, 3, 5, 7)
    assert layout.contiguous_strides((2, 3, 5, 7)) == x.stride()
    assert (
        layout.channels_last_strides((2, 3, 5, 7))
        == x.to(memory_format=torch.channels_last).stride()
    )
    for t in (x, x.transpose(1, 2), x[:, :1], x[:1], x[:, 1], x[..., :1], x.expand(2, 3, 5, 7)):
        assert layout.is_contiguous(layout_of(t)) == t.is_contiguous()


def test_matmul_copies_match_profiler():
    assert all(p == m for _, p, m in matmul_copy_table())
    assert random_matmul_trials(60, seed=2) == (60, 60)


# -- autograd ----------------------------------------------------------------------------------


def test_rms_norm_function_gradcheck_and_saves_less():
    torch.manual_seed(0)
    x = torch.randn(5, 8, dtype=torch.float64, requires_grad=True)
    w = torch.randn(8, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ag.rms_norm, (x, w, 1e-6))
    ours, plain = ag.SavedTensorLedger([w]), ag.SavedTensorLedger([w])
    with ours:
        ag.rms_norm(x, w)
    with plain:
        plain_rms_norm(x, w)
    assert ours.saved_bytes() == 5 * 8 * 8 + 5 * 8
    assert plain.saved_bytes() == 2 * 5 * 8 * 8 + 5 * 8


def test_graph_walk_equals_executed_nodes():
    x = torch.randn(4, 6, requires_grad=True)
    out = (torch.tanh(x) * x.sigmoid()).sum()
    assert set(ag.graph_nodes(out)) == executed_nodes(out)


@pytest.mark.parametrize("checkpointed", [False, True])
def test_saved_bytes_formulas(checkpointed):
    x = torch.randn(12, 16, requires_grad=True)
    mlp = mlp_block(16, 40)
    assert measured_saved_bytes(mlp, x, checkpointed) == ag.mlp_saved_bytes(
        12, 16, 40, 4, checkpointed
    )
    swiglu = SwiGLU(16, 40)
    assert measured_saved_bytes(swiglu, x, checkpointed) == ag.swiglu_saved_bytes(
        12, 16, 40, 4, checkpointed
    )


def test_retain_graph_keeps_saved_tensors():
    block, x = mlp_block(8, 16), torch.randn(3, 8, requires_grad=True)
    ledger = ag.SavedTensorLedger(block.parameters())
    with ledger:
        loss = block(x).sum()
    held = ledger.live_bytes()
    loss.backward(retain_graph=True)
    assert ledger.live_bytes() == held > 0
    loss.backward()
    assert ledger.live_bytes() == 0


# -- torch.distributed ---------------------------------------------------------------------------


def test_reference_collectives_shapes():
    xs = [torch.full((4,), float(r)) for r in range(4)]
    assert torch.equal(dist.all_reduce(xs)[2], torch.full((4,), 6.0))
    assert dist.all_gather(xs)[0].shape == (16,)
    assert dist.reduce_scatter(xs)[1].shape == (1,)
    assert torch.equal(dist.all_to_all(xs)[1], torch.tensor([0.0, 1.0, 2.0, 3.0]))


def test_shard_sizes_and_mesh_groups():
    assert dist.shard_sizes(10, 4) == [3, 3, 3, 1]
    assert dist.shard_sizes(8, 16)[8:] == [0] * 8
    assert dist.mesh_groups((2, 4), 1) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert dist.mesh_groups((2, 4), 0) == [[0, 4], [1, 5], [2, 6], [3, 7]]


def test_collectives_on_gloo():
    results = run_ranks(collectives_match, 4)
    assert all(all(r.values()) for r in results)


def test_dtensor_against_reference():
    out = run_ranks(mesh_and_dtensor, 4)
    assert [o["local_rows"] for o in out] == dist.shard_sizes(10, 4)
    for change, (counts, same) in out[0]["comms"].items():
        src, dst = change.split("->")
        expected = dist.redistribute_collective(src, dst)
        assert same
        if expected in ("all_gather", "all_reduce", "reduce_scatter"):
            assert any(k.startswith(expected) for k in counts)
        if expected is None:
            assert counts == {}
    assert out[0]["matmul_placement"] == "P(sum)"


# -- streams and graphs --------------------------------------------------------------------------


@pytest.mark.parametrize("n,c,m", [(5, 1.0, 0.3), (5, 1.0, 3.0), (2, 2.0, 2.0)])
def test_overlap_closed_form(n, c, m):
    assert (
        abs(streams.overlapped_backward(n, c, m).makespan() - (c + (n - 1) * max(c, m) + m)) < 1e-9
    )


def test_record_stream_prevents_the_race():
    assert side_stream_reuse("nothing")["races"]
    assert not side_stream_reuse("record_stream")["races"]
    assert not side_stream_reuse("wait_stream")["races"]


def test_graph_replay_matches_eager_and_refuses_sync():
    w = torch.randn(5, 5)

    def f(x):
        return torch.tanh(x @ w).exp()

    static = torch.randn(3, 5)
    rec, out = streams.capture(f, static)
    new = torch.randn(3, 5)
    static.copy_(new)
    rec.replay()
    assert torch.allclose(out, f(new))
    with pytest.raises(streams.CaptureError):
        streams.capture(lambda x: x * float(x.sum()), torch.randn(3))


# -- torch.compile -------------------------------------------------------------------------------


def test_kernel_plan_groups():
    assert comp.kernel_plan(["mm", "gelu", "mul", "mm", "add"]) == [
        ["mm"],
        ["gelu", "mul"],
        ["mm"],
        ["add"],
    ]
    assert len(comp.kernel_plan(["pow", "mean", "add", "rsqrt", "mul"])) == 1


def test_guard_model_matches_dynamo():
    calls = [
        (torch.randn(4, 8), 2.0),
        (torch.randn(6, 8), 2.0),
        (torch.randn(1, 8), 2.0),
        (torch.randn(6, 8, dtype=torch.float64), 2.0),
        (torch.randn(6, 8), 5.0),
    ]
    model, running, predicted = comp.GuardModel(), 0, []
    for args in calls:
        running += model.call(*args)
        predicted.append(running)
    assert predicted == dynamo_compiles(calls)


# -- the allocator -------------------------------------------------------------------------------


def test_constants_match_header():
    assert header_constants() == {
        "kSmallBuffer": A.SMALL_BUFFER,
        "kMinBlockSize": A.MIN_BLOCK,
        "kSmallSize": A.SMALL_SIZE,
        "kMinLargeAlloc": A.MIN_LARGE_ALLOC,
        "kRoundLarge": A.ROUND_LARGE,
    }


def test_split_merge_and_empty_cache():
    mem = A.CachingAllocator()
    a, b = mem.malloc(3 * A.MIB), mem.malloc(3 * A.MIB)
    assert mem.stats()["segment.all.current"] == 1 and b.address == a.address + 3 * A.MIB
    mem.free(a)
    mem.free(b)
    assert mem.largest_free_block() == 20 * A.MIB  # merged back into one block
    mem.empty_cache()
    assert mem.stats()["reserved_bytes.all.current"] == 0


def test_fragmentation_and_expandable_closed_forms():
    mem = A.CachingAllocator()
    acts = [mem.malloc(6 * A.MIB) for _ in range(12)]
    for t in acts[1::2]:
        mem.free(t)
    for _ in range(4):
        mem.malloc(11 * A.MIB)
    assert mem.stats()["reserved_bytes.all.current"] == 128 * A.MIB
    for expandable, reserved in ((False, 208), (True, 120)):
        mem = A.CachingAllocator(expandable=expandable)
        for size in (12, 14):
            for t in [mem.malloc(size * A.MIB) for _ in range(8)]:
                mem.free(t)
        assert mem.stats()["reserved_bytes.all.current"] == reserved * A.MIB


# -- dispatch ------------------------------------------------------------------------------------


def test_decoder_layer_operator_count_is_width_independent():
    def ops(hidden, heads, kv, d, ffn):
        torch.manual_seed(0)
        layer = DecoderLayer(hidden, heads, kv, d, ffn)
        args = (
            torch.randn(1, hidden),
            torch.tensor([8]),
            torch.randn(8, kv, d),
            torch.randn(8, kv, d),
        )
        log = OpLog()
        with torch.no_grad(), log:
            layer(*args)
        return log

    small, wide = ops(32, 4, 2, 8, 64), ops(128, 8, 4, 16, 256)
    assert small.ops == wide.ops and len(small.kernels()) == 44
