"""FlashAttention-3's host heuristics: the page's Python ports against the pinned C++ headers
(attention/flash-attention-2-3.md, labs 4 and 7). Skipped without a compiler or the objects."""

from atlas.labkit.attention.partition import fa3_num_splits, fa3_should_pack_gqa, max_block_n
from atlas.labkit.checks.attention.fa3_upstream import call_upstream, tile_sizes_fwd_sm90


def _b(x: bool) -> str:
    return "true" if x else "false"


def test_ports_agree_with_pinned_heuristics():
    packs = [(v, s, g, 128) for v in (False, True) for s in (1, 7, 100, 1000) for g in (1, 4, 8)]
    splits = [
        (t, 132, n, 1, kv, c)
        for t in (1, 8, 200)
        for n in (3, 64)
        for kv in (1 << 20, 200 << 20)
        for c in (False, True)
    ]
    calls = [f"should_pack_gqa({_b(v)}, {s}, {g}, {m})" for v, s, g, m in packs]
    calls += [
        f"num_splits_heuristic({t}, {sm}, {n}, {mb}, {kv}, {_b(c)}, 128)"
        for t, sm, n, mb, kv, c in splits
    ]
    ours = [str(int(fa3_should_pack_gqa(*a))) for a in packs] + [
        str(fa3_num_splits(*a)) for a in splits
    ]
    assert call_upstream(calls) == ours


def test_smem_model_bounds_the_kernel_tiles():
    kernel = tile_sizes_fwd_sm90([(192, 192, False), (256, 256, False)])
    limit = 227 * 1024
    assert [bn for _, bn, _, _ in kernel.values()] == [
        max_block_n(192, 192, limit),
        max_block_n(256, 256, limit),
    ]
