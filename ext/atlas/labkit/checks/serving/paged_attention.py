"""Checks of the labs of ``serving/paged-attention.md``.

The chapter's checks: the checks, traces and demos its labs run.
"""

from __future__ import annotations

import torch

from atlas.labkit.checks.common.attention import causal_attention
from atlas.labkit.serving.block_allocator import BlockAllocator
from atlas.labkit.serving.paged_attention import (
    PagedKVCache,
    paged_attention,
    slot_mapping,
    store_kv,
)
from atlas.labkit.serving.simulator import TraceRequest

ROLE = "check"


def paged_equals_dense(
    seq_lens: list[int],
    *,
    block_size: int = 4,
    num_blocks: int = 64,
    heads: int = 4,
    kv_heads: int = 2,
    head_dim: int = 16,
    new_tokens: int = 1,
    seed: int = 0,
) -> dict[str, object]:
    """Fill a shared pool for several sequences through shuffled block tables, then compare.

    Each sequence's keys go into blocks drawn at random from the pool (so neighbouring tokens
    are not neighbours in memory); the last ``new_tokens`` positions are queried, as in decode
    (1) or a chunked prefill (more). Returns the block tables and the largest difference from
    dense attention over the same keys.
    """
    gen = torch.Generator().manual_seed(seed)
    cache = PagedKVCache.empty(num_blocks, block_size, kv_heads, head_dim)
    free = torch.randperm(num_blocks, generator=gen).tolist()
    worst = 0.0
    tables: list[list[int]] = []
    for n in seq_lens:
        need = -(-n // block_size)
        if need > len(free):
            raise ValueError(f"{sum(seq_lens)} tokens do not fit in {num_blocks} blocks")
        table = [free.pop() for _ in range(need)]
        tables.append(table)
        k = torch.randn(n, kv_heads, head_dim, generator=gen, dtype=torch.float64)
        v = torch.randn(n, kv_heads, head_dim, generator=gen, dtype=torch.float64)
        store_kv(cache, slot_mapping(table, 0, n, block_size), k, v)
        q = torch.randn(new_tokens, heads, head_dim, generator=gen, dtype=torch.float64)
        pos = torch.arange(n - new_tokens, n)
        paged = paged_attention(q, pos, cache, table, n)
        dense = causal_attention(q, k, v, pos)
        worst = max(worst, (paged - dense).abs().max().item())
    return {"block_tables": tables, "max_abs_diff": worst, "match": worst < 1e-12}


def parallel_sampling_demo(
    prompt_len: int = 10, samples: int = 3, new_tokens: int = 6, block_size: int = 4, seed: int = 0
) -> dict[str, object]:
    """Fork one prompt into ``samples`` sequences, decode each, and verify their KV data.

    The KV data of a token is modelled as one number per slot in a pool (enough to catch a
    write into the wrong block). Each sample writes different tokens; after decoding, every
    sample must read back exactly its own prompt-plus-samples sequence through its table.
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    total = prompt_len + new_tokens
    num_blocks = samples * -(-total // block_size)
    alloc = BlockAllocator(num_blocks, block_size)
    pool = torch.full((num_blocks, block_size), float("nan"), dtype=torch.float64)
    prompt = torch.randn(prompt_len, generator=gen, dtype=torch.float64)
    first = alloc.allocate(prompt_len)
    for p in range(prompt_len):
        pool[first.table[p // block_size], p % block_size] = prompt[p]
    seqs = [first] + [alloc.fork(first) for _ in range(samples - 1)]
    blocks_after_fork = alloc.num_used
    expected = [prompt.tolist() for _ in range(samples)]
    copies = 0
    for _ in range(new_tokens):
        for i, seq in enumerate(seqs):
            value = torch.randn(1, generator=gen, dtype=torch.float64).item()
            pos = seq.num_tokens
            copy = alloc.append_token(seq)
            if copy is not None:
                pool[copy[1]] = pool[copy[0]]
                copies += 1
            pool[seq.table[pos // block_size], pos % block_size] = value
            expected[i].append(value)
        alloc.check(seqs)
    readback_ok = all(
        [pool[seq.table[p // block_size], p % block_size].item() for p in range(total)] == exp
        for seq, exp in zip(seqs, expected, strict=True)
    )
    peak = alloc.num_used
    for seq in seqs:
        alloc.free_seq(seq)
    alloc.check([])
    return {
        "blocks_after_fork": blocks_after_fork,
        "blocks_without_sharing": samples * -(-prompt_len // block_size),
        "copy_on_write_copies": copies,
        "blocks_at_end": peak,
        "blocks_without_sharing_at_end": samples * -(-total // block_size),
        "readback_ok": readback_ok,
        "all_free_after": alloc.num_free == num_blocks,
    }


def paged_slots(trace: list[TraceRequest], block_size: int) -> int:
    """Slots a :class:`BlockAllocator` holds once every request of ``trace`` has its prompt
    allocated and has appended its answer one token at a time (all requests alive at once)."""
    total_blocks = sum(-(-(r.prompt_len + r.output_len) // block_size) for r in trace)
    alloc = BlockAllocator(total_blocks + 1, block_size)
    for r in trace:
        seq = alloc.allocate(r.prompt_len)
        for _ in range(r.output_len):
            alloc.append_token(seq)
    return alloc.num_used * block_size


def cow_closed_form(prompt_len: int, samples: int, new_tokens: int, block_size: int) -> dict:
    """What :func:`parallel_sampling_demo` must find, in closed form: the fork shares the
    prompt's ``ceil(P/B)`` blocks; if the prompt's last block is partly filled, every sample
    but the last to write copies it once; at the end each sample owns its blocks past the
    shared full ones."""
    b = block_size
    shared_full = prompt_len // b
    partial = prompt_len % b != 0
    own = -(-(prompt_len + new_tokens) // b) - shared_full
    return {
        "blocks_after_fork": -(-prompt_len // b),
        "copy_on_write_copies": (samples - 1) if partial else 0,
        "blocks_at_end": shared_full + samples * own,
    }
