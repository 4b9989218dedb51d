"""The serving chapter's harness: the checks, traces and demos its labs run.

The pages teach the paged KV cache and its attention (:mod:`..paged_attention`), the block
allocator (:mod:`..block_allocator`), prefix caching (:mod:`..prefix_cache`), the scheduler
simulator (:mod:`..simulator`), the KV ledger and roofline (:mod:`..models`,
:mod:`..roofline`). This package builds what the labs feed them (synthetic and chat traces),
replays traces through them, and compares them with independent references: dense causal
attention (:func:`atlas.labkit.harness.causal_attention`), per-slot read-back, nano-vllm's own
code at its pin (:mod:`.nanovllm`, loaded from the upstream's git objects).
"""

from __future__ import annotations

import math
import random
import types
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from atlas.labkit.checks.common.attention import causal_attention
from atlas.labkit.serving.block_allocator import BlockAllocator
from atlas.labkit.serving.harness import nanovllm  # noqa: F401 - the upstream loader
from atlas.labkit.serving.models import ModelConfig
from atlas.labkit.serving.paged_attention import (
    PagedKVCache,
    paged_attention,
    slot_mapping,
    store_kv,
)
from atlas.labkit.serving.prefix_cache import PrefixCache, RadixCache
from atlas.labkit.serving.simulator import SimResult, TraceRequest


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


def synthetic_trace(
    num_requests: int,
    *,
    rate: float = math.inf,
    prompt_len: tuple[int, int] = (128, 2048),
    output_len: tuple[int, int] = (16, 512),
    seed: int = 0,
) -> list[TraceRequest]:
    """Poisson arrivals at ``rate`` requests/s (all at t=0 when infinite), uniform lengths."""
    rng = random.Random(seed)
    t = 0.0
    trace = []
    for rid in range(num_requests):
        if math.isfinite(rate):
            t += rng.expovariate(rate)
        trace.append(TraceRequest(rid, t, rng.randint(*prompt_len), rng.randint(*output_len)))
    return trace


def policy_table(
    results: dict[str, SimResult], ttft_slo: float = 1.0, tpot_slo: float = 0.05
) -> str:
    """One row per policy: throughput, TTFT, TPOT, and the requests per second of the run that
    met both objectives (the per-run count, not DistServe's goodput)."""
    head = (
        f"{'policy':<11}{'tok/s':>7}{'TTFT mean':>11}{'TTFT p99':>10}"
        f"{'TPOT mean':>11}{'TPOT p99':>10}{'in SLO/s':>9}"
    )
    lines = [head]
    for name, res in results.items():
        s = res.summary(ttft_slo, tpot_slo)
        lines.append(
            f"{name:<11}{s['throughput_tok_s']:>7}{s['mean_ttft_s']:>10.2f}s{s['p99_ttft_s']:>9.2f}s"
            f"{s['mean_tpot_ms']:>9.1f}ms{s['p99_tpot_ms']:>8.1f}ms{s['goodput_req_s']:>9.2f}"
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class Request:
    """A prompt and the tokens the model will answer with (fixed, so runs are comparable)."""

    prompt: list[int]
    output: list[int]


def chat_trace(
    *,
    conversations: int = 24,
    turns: int = 4,
    system_prompts: int = 3,
    system_len: int = 300,
    user_len: tuple[int, int] = (20, 120),
    output_len: tuple[int, int] = (30, 200),
    vocab: int = 32000,
    seed: int = 0,
) -> list[Request]:
    """Multi-turn chats that share a few system prompts, interleaved round-robin.

    Turn ``k`` of a conversation sends the system prompt, every earlier user message and
    answer, and a new user message: the shared prefixes a chat server sees in practice.
    """
    rng = random.Random(seed)
    systems = [[rng.randrange(vocab) for _ in range(system_len)] for _ in range(system_prompts)]
    histories = [list(systems[c % system_prompts]) for c in range(conversations)]
    trace: list[Request] = []
    for _ in range(turns):
        for c in range(conversations):
            histories[c] += [rng.randrange(vocab) for _ in range(rng.randint(*user_len))]
            answer = [rng.randrange(vocab) for _ in range(rng.randint(*output_len))]
            trace.append(Request(list(histories[c]), answer))
            histories[c] += answer
    return trace


@dataclass(frozen=True)
class HitReport:
    prompt_tokens: int
    cached_tokens: int
    per_request: tuple[int, ...]

    @property
    def hit_rate(self) -> float:
        return self.cached_tokens / self.prompt_tokens


def run_block_cache(
    trace: list[Request], num_blocks: int, block_size: int, salts: list[int | None] | None = None
) -> HitReport:
    """Serve ``trace`` one request at a time through a ``PrefixCache``; count cached tokens.

    Prompt blocks are published after prefill; blocks filled while decoding are published as
    they fill, so the next turn of a chat can hit its own earlier answers. ``salts`` gives
    each request's cache salt (``None``: unsalted).
    """
    cache = PrefixCache(num_blocks, block_size)
    per_request: list[int] = []
    for i, req in enumerate(trace):
        salt = salts[i] if salts else None
        got = cache.allocate(req.prompt, salt)
        if got is None:
            raise ValueError(f"a prompt of {len(req.prompt)} tokens does not fit in the pool")
        table, cached = got
        per_request.append(cached)
        tokens = list(req.prompt)
        done = cache.commit(table, tokens, 0, salt)
        for t in req.output[:-1]:  # the last answer token is sampled, never fed back
            tokens.append(t)
            if not cache.grow(table, len(tokens) - 1):
                raise ValueError("pool exhausted while decoding; use more blocks")
            done = cache.commit(table, tokens, done, salt)
        cache.release(table)
    total = sum(len(r.prompt) for r in trace)
    return HitReport(total, sum(per_request), tuple(per_request))


def run_radix_cache(trace: list[Request]) -> HitReport:
    """The same trace through an unbounded token-level radix tree."""
    tree = RadixCache()
    per_request: list[int] = []
    for req in trace:
        per_request.append(tree.match(req.prompt))
        tree.insert(req.prompt + req.output[:-1])
    total = sum(len(r.prompt) for r in trace)
    return HitReport(total, sum(per_request), tuple(per_request))


def tp_block_matches_dense(
    rank: int,
    world_size: int,
    linear: types.ModuleType,
    hidden: int = 32,
    heads: int = 4,
    kv_heads: int = 2,
    head_dim: int = 8,
    intermediate: int = 48,
    tokens: int = 5,
) -> dict[str, object]:
    """Run on ``world_size`` ranks (through ``run_ranks``); compare with the dense block."""
    torch.set_default_dtype(torch.float64)
    gen = torch.Generator().manual_seed(1234)  # the same full weights on every rank

    def rand(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen) / shape[-1] ** 0.5

    wq, wk = rand(heads * head_dim, hidden), rand(kv_heads * head_dim, hidden)
    wv = rand(kv_heads * head_dim, hidden)
    wo = rand(hidden, heads * head_dim)
    wg, wu, wd = rand(intermediate, hidden), rand(intermediate, hidden), rand(hidden, intermediate)
    x = rand(tokens, hidden)

    qkv = linear.QKVParallelLinear(hidden, head_dim, heads, kv_heads)
    for shard, w in (("q", wq), ("k", wk), ("v", wv)):
        qkv.weight.weight_loader(qkv.weight, w, shard)
    o_proj = linear.RowParallelLinear(heads * head_dim, hidden)
    o_proj.weight.weight_loader(o_proj.weight, wo)
    gate_up = linear.MergedColumnParallelLinear(hidden, [intermediate, intermediate])
    gate_up.weight.weight_loader(gate_up.weight, wg, 0)
    gate_up.weight.weight_loader(gate_up.weight, wu, 1)
    down = linear.RowParallelLinear(intermediate, hidden)
    down.weight.weight_loader(down.weight, wd)

    with torch.no_grad():
        local_heads, local_kv = heads // world_size, kv_heads // world_size
        sizes = [local_heads * head_dim, local_kv * head_dim, local_kv * head_dim]
        q, k, v = qkv(x).split(sizes, -1)
        attn = o_proj(
            causal_attention(
                q.view(tokens, local_heads, head_dim),
                k.view(tokens, local_kv, head_dim),
                v.view(tokens, local_kv, head_dim),
            ).reshape(tokens, -1)
        )
        g, u = gate_up(x).chunk(2, -1)
        mlp = down(F.silu(g) * u)

        dense_attn = (
            causal_attention(
                (x @ wq.T).view(tokens, heads, head_dim),
                (x @ wk.T).view(tokens, kv_heads, head_dim),
                (x @ wv.T).view(tokens, kv_heads, head_dim),
            ).reshape(tokens, -1)
            @ wo.T
        )
        dense_mlp = (F.silu(x @ wg.T) * (x @ wu.T)) @ wd.T
    return {
        "qkv_rows": qkv.weight.shape[0],
        "gate_up_rows": gate_up.weight.shape[0],
        "attention_ok": torch.allclose(attn, dense_attn, atol=1e-12),
        "mlp_ok": torch.allclose(mlp, dense_mlp, atol=1e-12),
    }


def measured_step_flops(model: object, chunks: list[tuple[int, int]], seed: int = 0) -> int:
    """FLOPs of one forward step counted by PyTorch's ``FlopCounterMode`` on a plain decoder
    with ``model``'s shapes (use a small configuration: the weights are real tensors).

    Written from the architecture, not from :func:`..roofline.step_cost`: for each sequence
    (cached tokens ``c``, new tokens ``n``) the new tokens go through every layer (Q, K, V, O,
    a SwiGLU MLP), each query attends to the ``c`` cached keys and to the new keys up to its
    own position (grouped-query heads), and the output head runs on the last new token only.
    """
    from torch.utils.flop_counter import FlopCounterMode

    m = model
    gen = torch.Generator().manual_seed(seed)

    def w(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen) / shape[-1] ** 0.5

    h, a, kv, d, f = m.hidden_size, m.num_heads, m.num_kv_heads, m.head_dim, m.intermediate_size
    layers = [
        dict(q=w(a * d, h), k=w(kv * d, h), v=w(kv * d, h), o=w(h, a * d),
             g=w(f, h), u=w(f, h), dn=w(h, f))
        for _ in range(m.num_layers)
    ]
    head = w(m.vocab_size, h)
    caches = [
        [(torch.randn(c, kv, d, generator=gen), torch.randn(c, kv, d, generator=gen))
         for _ in range(m.num_layers)]
        for c, _ in chunks
    ]
    with FlopCounterMode(display=False) as counter:
        for (c, n), cache in zip(chunks, caches, strict=True):
            x = torch.randn(n, h, generator=gen)
            for layer, (k_old, v_old) in zip(layers, cache, strict=True):
                q = (x @ layer["q"].T).view(n, a, d)
                k = torch.cat([k_old, (x @ layer["k"].T).view(n, kv, d)])
                v = torch.cat([v_old, (x @ layer["v"].T).view(n, kv, d)])
                k, v = k.repeat_interleave(a // kv, 1), v.repeat_interleave(a // kv, 1)
                out = []
                for i in range(n):  # query i sees the cache and new keys 0..i
                    keys = c + i + 1
                    qi = q[i][:, None, :]  # [a, 1, d]
                    scores = torch.bmm(qi, k[:keys].permute(1, 2, 0)) / d**0.5
                    out.append(torch.bmm(torch.softmax(scores, -1), v[:keys].transpose(0, 1)))
                ctx = torch.cat(out, dim=1).transpose(0, 1).reshape(n, a * d)
                x = x + ctx @ layer["o"].T
                x = x + (F.silu(x @ layer["g"].T) * (x @ layer["u"].T)) @ layer["dn"].T
            x[-1:] @ head.T
    return int(counter.get_total_flops())


def unit_steps(chunks: list[tuple[int, int]]) -> float:
    """A cost model in which every step lasts one unit: times become step counts."""
    return 1.0


def static_closed_form(trace: list[TraceRequest], max_num_seqs: int) -> dict[int, tuple[int, int]]:
    """First-token and finish step of every request under static batching, in closed form,
    when all requests arrive at once, the cache holds any batch and each step costs one unit.

    Requests go in batches of ``max_num_seqs`` in order; a batch runs as many steps as its
    longest answer (the first step, the prefill, yields every first token), so batch ``j``
    starts after ``S_j``, the sum of the earlier batches' longest answers. A request of the
    batch gets its first token at ``S_j + 1`` and its last at ``S_j + output_len``.
    """
    times: dict[int, tuple[int, int]] = {}
    start = 0
    ordered = sorted(trace, key=lambda r: r.rid)
    for i in range(0, len(ordered), max_num_seqs):
        batch = ordered[i : i + max_num_seqs]
        for r in batch:
            times[r.rid] = (start + 1, start + r.output_len)
        start += max(r.output_len for r in batch)
    return times


def chunked_ttft_closed_form(prompt_len: int, budget: int, decoding: int) -> int:
    """Steps until a prompt of ``prompt_len`` tokens yields its first token under mixed
    (chunked-prefill) steps with a token budget of ``budget``, while ``decoding`` sequences
    each take one token of every step: ``ceil(prompt_len / (budget - decoding))``."""
    return -(-prompt_len // (budget - decoding))


def step_budget_ok(result: SimResult, budget: int, max_num_seqs: int) -> bool:
    """No step schedules more tokens than the budget or more sequences than the limit."""
    return all(
        sum(n for _, n in step.chunks) <= budget and len(step.chunks) <= max_num_seqs
        for step in result.steps
    )


def tokens_conserved(result: SimResult, trace: list[TraceRequest]) -> bool:
    """Without preemption, the steps compute every prompt token once and every generated
    token but the last once (the last is sampled, never fed back)."""
    computed = sum(n for step in result.steps for _, n in step.chunks)
    expected = sum(r.prompt_len + r.output_len - 1 for r in trace)
    return result.preemptions == 0 and computed == expected


# A small configuration for counting: every tensor of it is real and tiny (2 layers, hidden 64,
# 4 query heads and 2 key/value heads of dimension 16, MLP width 96, vocabulary 100).
TINY = ModelConfig("tiny", 2, 64, 4, 2, 16, 96, 100, False, 2, "a small shape for counting")


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


def block_hits_closed_form(trace: list[Request], block_size: int) -> tuple[int, ...]:
    """Cached prompt tokens per request for a block cache that never evicts, derived from the
    token-level radix tree: a request reuses every full block inside the longest prefix it
    shares with what earlier requests computed, except the block of its last prompt token
    (which must run to produce logits): ``min(match // B, ceil(L / B) - 1) * B``."""
    matches = run_radix_cache(trace).per_request
    b = block_size
    return tuple(
        min(m // b, -(-len(r.prompt) // b) - 1) * b for r, m in zip(trace, matches, strict=True)
    )


def distserve_goodput(
    make_trace: Callable[[float], list[TraceRequest]],
    policy: str,
    limits: object,
    cost: Callable[[list[tuple[int, int]]], float],
    ttft_slo: float,
    tpot_slo: float,
    target: float = 0.9,
    low: int = 1,
    high: int = 64,
) -> int:
    """DistServe's goodput: the highest arrival rate, in whole requests per second, at which
    at least ``target`` of the requests meet both objectives. Bisection between ``low`` (which
    must meet the target) and ``high`` (which must not), assuming attainment falls as the rate
    rises. ``make_trace(rate)`` builds the trace at a rate (the same seed at every rate)."""
    from atlas.labkit.serving.simulator import simulate

    def ok(rate: int) -> bool:
        run = simulate(make_trace(float(rate)), policy, limits, cost)  # type: ignore[arg-type]
        return run.attainment(ttft_slo, tpot_slo) >= target

    if not ok(low) or ok(high):
        raise ValueError(f"the target is not crossed between {low} and {high} requests/s")
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if ok(mid) else (low, mid)
    return low


def routed_hits(
    trace: list[Request], replicas: int, policy: str, block_size: int = 16, slack: float = 0.25
) -> tuple[int, list[int]]:
    """Route ``trace`` over ``replicas`` with :func:`..routing.route`, then serve each
    replica's share, in order, through its own never-evicting block cache. Returns the cached
    prompt tokens over all replicas and the requests each replica received."""
    from atlas.labkit.serving.routing import route

    chosen = route(trace, replicas, policy, slack)
    total = 0
    for r in range(replicas):
        share = [req for req, c in zip(trace, chosen, strict=True) if c == r]
        if share:
            total += run_block_cache(share, 10**5 // block_size, block_size).cached_tokens
    return total, [chosen.count(r) for r in range(replicas)]


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
        (torch.randn(n, kv_heads, head_dim, generator=gen, dtype=torch.float64),
         torch.randn(n, kv_heads, head_dim, generator=gen, dtype=torch.float64))
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


def attainment(ttft: dict[int, float], tpot: dict[int, float], ttft_slo: float, tpot_slo: float) -> float:
    """Share of requests that met both objectives (requests with one output token have no TPOT)."""
    ok = sum(1 for r in ttft if ttft[r] <= ttft_slo and tpot.get(r, 0.0) <= tpot_slo)
    return ok / len(ttft)


def colocated_latencies(
    trace: list[TraceRequest], limits: object, cost: Callable, replicas: int, policy: str = "chunked"
) -> tuple[dict[int, float], dict[int, float]]:
    """TTFT and TPOT of every request when ``replicas`` engines each serve both phases, the
    requests dealt out in turn."""
    from atlas.labkit.serving.simulator import simulate

    ttft: dict[int, float] = {}
    tpot: dict[int, float] = {}
    for k in range(replicas):
        share = [r for r in trace if r.rid % replicas == k]
        run = simulate(share, policy, limits, cost)  # type: ignore[arg-type]
        ttft.update(run.ttft)
        tpot.update(run.tpot)
    return ttft, tpot


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
        "continuous", prefill_limits, cost,  # type: ignore[arg-type]
    )
    first = {r.rid: r.arrival + prefill.ttft[r.rid] for r in trace}
    later = [
        TraceRequest(r.rid, first[r.rid] + r.prompt_len * kv_bytes_per_token / link_bytes_per_s,
                     r.prompt_len, r.output_len)
        for r in trace if r.output_len > 1
    ]
    decode = simulate(later, "continuous", decode_limits, decode_only_cost(cost))  # type: ignore[arg-type]
    tpot = {
        r.rid: (r.arrival + decode.e2e[r.rid] - first[r.rid]) / (r.output_len - 1) for r in later
    }
    return dict(prefill.ttft), tpot


def lora_matches_merged(
    tokens: int = 12, h_in: int = 32, h_out: int = 48, rank: int = 4, adapters: int = 3,
    scale: float = 2.0, seed: int = 0,
) -> dict[str, object]:
    """The batched multi-LoRA layer against each row multiplied by its own merged weight
    ``W + s B_i A_i``; and the FLOPs of the batched layer, counted by ``FlopCounterMode``, over
    those of the base multiply alone (every row with an adapter)."""
    from torch.utils.flop_counter import FlopCounterMode

    from atlas.labkit.serving.lora import lora_batched

    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, h_in, generator=gen, dtype=torch.float64)
    w = torch.randn(h_out, h_in, generator=gen, dtype=torch.float64)
    a = torch.randn(adapters, rank, h_in, generator=gen, dtype=torch.float64)
    b = torch.randn(adapters, h_out, rank, generator=gen, dtype=torch.float64)
    ids = torch.randint(-1, adapters, (tokens,), generator=gen)
    got = lora_batched(x, w, a, b, ids, scale)
    rows = []
    for t in range(tokens):
        merged = w if ids[t] < 0 else w + scale * b[ids[t]] @ a[ids[t]]
        rows.append(x[t] @ merged.T)
    every = torch.arange(tokens) % adapters
    with FlopCounterMode(display=False) as lora_count:
        lora_batched(x, w, a, b, every, scale)
    with FlopCounterMode(display=False) as base_count:
        x @ w.T
    return {
        "match": torch.allclose(got, torch.stack(rows), rtol=1e-10, atol=1e-10),
        "overhead": lora_count.get_total_flops() / base_count.get_total_flops() - 1,
    }


STRUCTURED_VOCAB = [
    "{", '{"', '"', "n", '"n', '":', ":", " ", ": ", '{"n": ', "0", "1", "2", "3", "4", "5",
    "6", "7", "8", "9", "12", "345", "07", "}", "7}", "0}", "a", "abc", "x", ",", "]", '"n":',
    "n\":", " 1", "true", "null", "{}", "Ω",
]


def constrained_samples(count: int = 200, max_steps: int = 30, seed: int = 0) -> dict[str, object]:
    """Sample ``count`` strings token by token from a uniform "model" over
    ``STRUCTURED_VOCAB``, masked by :func:`..structured.token_masks` (stopping at the final
    state), and as many unmasked; check every string with Python's own ``re.fullmatch``."""
    import re

    from atlas.labkit.serving.structured import DEAD, FINAL, read, token_masks

    pattern = re.compile(r'\{"n": [0-9]+\}')
    rng = random.Random(seed)
    masks = token_masks(STRUCTURED_VOCAB)
    masked_out, steps = 0, 0
    outputs = []
    for _ in range(count):
        state, text = 0, ""
        for _ in range(max_steps):
            if state == FINAL:
                break
            allowed = [t for t, ok in zip(STRUCTURED_VOCAB, masks[state], strict=True) if ok]
            masked_out += len(STRUCTURED_VOCAB) - len(allowed)
            steps += 1
            token = rng.choice(allowed)
            text += token
            state = read(state, token)
            assert state != DEAD
        outputs.append((state == FINAL, text))
    free = ["".join(rng.choice(STRUCTURED_VOCAB) for _ in range(rng.randint(1, 8))) for _ in range(count)]
    finished = [text for done, text in outputs if done]
    return {
        "finished": len(finished),
        "all_match": all(pattern.fullmatch(text) for text in finished),
        "unmasked_match": sum(1 for text in free if pattern.fullmatch(text)),
        "masked_share": round(masked_out / (steps * len(STRUCTURED_VOCAB)), 2),
        "example": finished[0] if finished else "",
    }
