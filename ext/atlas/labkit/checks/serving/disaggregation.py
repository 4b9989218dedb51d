"""Checks of the labs of ``serving/disaggregation.md``.

The chapter's checks: the checks, traces and demos its labs run.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from atlas.labkit.checks.common.attention import causal_attention
from atlas.labkit.serving.paged_attention import (
    PagedKVCache,
    paged_attention,
    slot_mapping,
    store_kv,
)
from atlas.labkit.serving.simulator import TraceRequest

ROLE = "check"


def relayout_matches_dense(
    seq_lens: list[int],
    *,
    heads: int = 16,
    kv_heads: int = 8,
    head_dim: int = 8,
    tp_prefill: int = 2,
    tp_decode: int = 4,
    block_prefill: int = 4,
    block_decode: int = 8,
    seed: int = 0,
) -> dict[str, object]:
    """Move a paged KV cache from a prefill instance (``tp_prefill`` ranks, its own blocks of
    ``block_prefill`` tokens) to a decode instance (``tp_decode`` ranks, blocks of
    ``block_decode``), following :func:`..disaggregation.transfer_plan`; then every decode rank
    runs paged attention for its query heads and is compared with dense causal attention over
    all heads. Returns ``match`` and the elements each decode rank received."""
    from atlas.labkit.serving.disaggregation import transfer_plan

    gen = torch.Generator().manual_seed(seed)
    pools = 64

    def cache_of(tp: int, block: int) -> list[tuple[PagedKVCache, list[list[int]]]]:
        ranks = []
        for _ in range(tp):
            free = torch.randperm(pools, generator=gen).tolist()
            tables = [[free.pop() for _ in range(-(-n // block))] for n in seq_lens]
            ranks.append((PagedKVCache.empty(pools, block, kv_heads // tp, head_dim), tables))
        return ranks

    dense = [
        (
            torch.randn(n, kv_heads, head_dim, generator=gen, dtype=torch.float64),
            torch.randn(n, kv_heads, head_dim, generator=gen, dtype=torch.float64),
        )
        for n in seq_lens
    ]
    src = cache_of(tp_prefill, block_prefill)
    per_src = kv_heads // tp_prefill
    for i, (cache, tables) in enumerate(src):  # the prefill instance writes its own heads
        for (k, v), table, n in zip(dense, tables, seq_lens, strict=True):
            heads_i = slice(i * per_src, (i + 1) * per_src)
            store_kv(cache, slot_mapping(table, 0, n, block_prefill), k[:, heads_i], v[:, heads_i])
    dst = cache_of(tp_decode, block_decode)
    per_dst = kv_heads // tp_decode
    received = [0] * tp_decode
    for i, j, moved in transfer_plan(kv_heads, tp_prefill, tp_decode):
        (scache, stables), (dcache, dtables) = src[i], dst[j]
        a, b = moved.start - i * per_src, moved.stop - i * per_src  # heads in the source
        c, d = moved.start - j * per_dst, moved.stop - j * per_dst  # heads in the destination
        for stable, dtable, n in zip(stables, dtables, seq_lens, strict=True):
            s_slots = slot_mapping(stable, 0, n, block_prefill)
            d_slots = slot_mapping(dtable, 0, n, block_decode)
            for pool_s, pool_d in ((scache.k, dcache.k), (scache.v, dcache.v)):
                rows = pool_s.view(-1, *pool_s.shape[2:])[s_slots, a:b]
                pool_d.view(-1, *pool_d.shape[2:])[d_slots, c:d] = rows
                received[j] += rows.numel()
    worst = 0.0
    q_per_rank = heads // tp_decode
    for (k, v), n, s in zip(dense, seq_lens, range(len(seq_lens)), strict=True):
        q = torch.randn(1, heads, head_dim, generator=gen, dtype=torch.float64)
        pos = torch.tensor([n - 1])
        full = causal_attention(q, k, v, pos)
        for j, (cache, tables) in enumerate(dst):
            mine = slice(j * q_per_rank, (j + 1) * q_per_rank)
            out = paged_attention(q[:, mine], pos, cache, tables[s], n)
            worst = max(worst, (out - full[:, mine]).abs().max().item())
    return {"match": worst < 1e-12, "received": received}


def disaggregated_latencies(
    trace: list[TraceRequest],
    prefill_limits: object,
    decode_limits: object,
    cost: Callable,
    kv_bytes_per_token: int,
    link_bytes_per_s: float,
) -> tuple[dict[int, float], dict[int, float]]:
    """TTFT and TPOT when one instance prefills (and samples the first token), the keys and
    values then cross a link, and another instance decodes the rest."""
    from atlas.labkit.serving.disaggregation import decode_only_cost
    from atlas.labkit.serving.simulator import simulate

    prefill = simulate(
        [TraceRequest(r.rid, r.arrival, r.prompt_len, 1) for r in trace],
        "continuous",
        prefill_limits,
        cost,  # type: ignore[arg-type]
    )
    first = {r.rid: r.arrival + prefill.ttft[r.rid] for r in trace}
    later = [
        TraceRequest(
            r.rid,
            first[r.rid] + r.prompt_len * kv_bytes_per_token / link_bytes_per_s,
            r.prompt_len,
            r.output_len,
        )
        for r in trace
        if r.output_len > 1
    ]
    decode = simulate(later, "continuous", decode_limits, decode_only_cost(cost))  # type: ignore[arg-type]
    tpot = {
        r.rid: (r.arrival + decode.e2e[r.rid] - first[r.rid]) / (r.output_len - 1) for r in later
    }
    return dict(prefill.ttft), tpot
