"""How FlashAttention-2 and -3 split the work: grids, waves, schedules, shared memory, FP8.

Small models of the decisions the kernels make, each checkable on a CPU: how many thread
blocks a launch has and how full the last wave is; how causal tiles of unequal cost pack onto
SMs; how many K/V rows fit beside a Q tile in shared memory; how much of a tile's time the
tensor cores are busy under three schedules; what the FP8 offset of the softmax buys.
"""

from __future__ import annotations

import heapq
import math

import torch

ROLE = "taught"


def fa1_grid(batch: int, heads: int) -> int:
    """FlashAttention-1 launches one thread block per (batch, head)."""
    return batch * heads


def fa2_grid(batch: int, heads: int, seqlen_q: int, block_m: int) -> int:
    """FlashAttention-2 adds the query-tile index to the grid: ``(ceil(M / Bm), b, h)``."""
    return math.ceil(seqlen_q / block_m) * batch * heads


def wave_efficiency(blocks: int, sms: int, blocks_per_sm: int = 1) -> float:
    """Fraction of SM slots busy, averaged over the waves a launch of equal blocks needs."""
    slots = sms * blocks_per_sm
    waves = blocks / slots
    return waves / math.ceil(waves)


def causal_tile_costs(seqlen: int, block_m: int, block_n: int) -> list[int]:
    """Key tiles each query tile visits under a causal mask (its cost in tile steps)."""
    return [math.ceil(min(seqlen, i0 + block_m) / block_n) for i0 in range(0, seqlen, block_m)]


def makespan(costs: list[float], sms: int, order: str = "given") -> float:
    """Time to run independent blocks of the given costs on ``sms`` identical SMs.

    Each SM takes the next block in the queue as soon as it is free (greedy list
    scheduling). ``order="lpt"`` queues the longest blocks first, as FlashAttention-3's
    scheduler does for causal attention.
    """
    queue = sorted(costs, reverse=True) if order == "lpt" else list(costs)
    free_at = [0.0] * sms
    heapq.heapify(free_at)
    end = 0.0
    for c in queue:
        start = heapq.heappop(free_at)
        heapq.heappush(free_at, start + c)
        end = max(end, start + c)
    return end


def fa3_l2_section(
    seqlen_k: int, d: int, dv: int, elem_bytes: int = 2, qhead_per_khead: int = 1
) -> int:
    """Heads per scheduling section of FlashAttention-3's causal scheduler: as many KV heads as
    fit in 32 MiB of L2 (rounded down to a power of two, at least one), times the query heads
    that share each KV head (without PackGQA). The scheduler orders tiles longest-first only
    within a section, so that the K and V of the heads in flight stay in L2."""
    one_kv_head = seqlen_k * (d + dv) * elem_bytes
    l2 = 32 * 1024 * 1024
    kv_heads = 1 if l2 < one_kv_head else 1 << int(math.log2(l2 // one_kv_head))
    return kv_heads * qhead_per_khead


def fa3_causal_queue(costs: list[int], heads: int, section: int) -> list[int]:
    """The order in which FlashAttention-3's persistent causal scheduler hands out tiles.

    Tile index ``t`` maps to a section of ``section`` heads; inside it, consecutive indices
    cycle over the section's heads at one query tile, and the query tiles are taken from the
    last (longest) to the first. The last section holds the remaining heads. ``costs`` are one
    head's per-query-tile costs; the result lists the cost of each tile in hand-out order.
    """
    n, queue = len(costs), []
    for start in range(0, heads, section):
        width = min(section, heads - start)
        for block in reversed(range(n)):
            queue.extend([costs[block]] * width)
    return queue


def pack_gqa_efficiency(seqlen_q: int, qhead_per_khead: int, block_m: int) -> tuple[float, float]:
    """Fraction of a query tile's rows that hold real queries, without and with PackGQA.

    Without packing, each query head of a KV head gets its own tiles of ``block_m`` rows, and a
    short ``seqlen_q`` leaves most rows empty. PackGQA puts the ``qhead_per_khead`` heads that
    share a KV head into the rows of one tile (``seqlen_q * qhead_per_khead`` rows), so one load
    of K and V serves all of them.
    """

    def fill(rows: int) -> float:
        return rows / (math.ceil(rows / block_m) * block_m)

    return fill(seqlen_q), fill(seqlen_q * qhead_per_khead)


def fa3_should_pack_gqa(varlen_q: bool, seqlen_q: int, qhead_per_khead: int, block_m: int) -> bool:
    """FlashAttention-3's choice (``should_pack_gqa``): always for variable-length queries, whose
    lengths it does not know; otherwise pack when the unpacked tiles are less than 90% as full as
    the packed ones."""
    if varlen_q:
        return True
    unpacked, packed = pack_gqa_efficiency(seqlen_q, qhead_per_khead, block_m)
    return unpacked < 0.9 * packed


def fa3_num_splits(
    total_mblocks: int,
    num_sms: int,
    num_n_blocks: int,
    num_m_blocks: int,
    size_one_kv_head: int,
    causal_or_local: bool,
    max_splits: int = 128,
) -> int:
    """FlashAttention-3's split-KV count (``num_splits_heuristic`` in ``hopper/heuristics.h``).

    The wave rule of FlashAttention-2 (smallest split count within 85% of the best wave
    efficiency), plus two changes: a launch that already fills 80% of the SMs is split only
    when one KV head exceeds 50 MiB of L2, there are at least two waves of query tiles, and the
    mask is not causal or local (then one split per 50 MiB); and 4 key tiles or fewer are never
    split.
    """
    if total_mblocks >= 0.8 * num_sms:
        l2 = 50 * 1024 * 1024
        if size_one_kv_head > l2 and num_m_blocks >= 2 * num_sms and not causal_or_local:
            return min(-(-size_one_kv_head // l2), max_splits)
        return 1
    if num_n_blocks <= 4:
        return 1
    max_splits = min(max_splits, num_sms, num_n_blocks)
    eff = []
    for splits in range(1, max_splits + 1):
        waves = total_mblocks * splits / num_sms
        eff.append(waves / math.ceil(waves))
    best = max(eff)
    return next(i + 1 for i, e in enumerate(eff) if e >= 0.85 * best)


def smem_bytes_sm90(block_m, block_n, d, dv, stages=2, elem_bytes=2, p_in_smem=False):
    """Shared memory of the Hopper forward's main loop: one Q tile, ``stages`` K and V tiles,
    and the P tile when the second GEMM reads P from shared memory instead of registers."""
    q = block_m * d
    kv = stages * block_n * (d + dv)
    p = block_m * block_n if p_in_smem else 0
    return elem_bytes * (q + kv + p)


def max_block_n(d, dv, smem_limit, block_m=128, stages=2, elem_bytes=2, multiple=16):
    """The widest K/V tile (a multiple of ``multiple`` rows) whose buffers fit ``smem_limit``."""
    free = smem_limit - elem_bytes * block_m * d
    rows = free // (elem_bytes * stages * (d + dv))
    return int(rows // multiple * multiple)


def simulate_tiles(n_tiles: int, t_gemm: float, t_softmax: float, mode: str) -> dict:
    """Time one SM needs for ``n_tiles`` K/V tiles, and how busy its tensor cores are.

    Each tile needs two GEMMs on the tensor cores (``S = QK^T`` and ``O += PV``, ``t_gemm``
    each) and one softmax on the other units (``t_softmax``). Modes:

    - ``serial``: one warpgroup, GEMM, softmax, GEMM, in order (no overlap).
    - ``pingpong``: two warpgroups on different query tiles share the tensor cores; each
      issues its previous tile's ``PV`` and its next tile's ``QK^T`` together, then computes
      the softmax while the other warpgroup's GEMMs run (inter-warpgroup overlap).
    - ``intra``: one warpgroup issues the next tile's ``QK^T`` and the previous tile's ``PV``
      asynchronously, then computes the softmax while they run (intra-warpgroup overlap).

    A greedy event simulation: an operation starts when its inputs are ready and its unit is
    free, the tensor cores serving operations in the order the program issues them.
    """
    ops: list[tuple[str, str, float, list[str], int]] = []  # name, unit, time, deps, issuer
    if mode == "serial":
        for t in range(n_tiles):
            ops.append((f"qk{t}", "tc", t_gemm, [f"pv{t - 1}"] if t else [], 0))
            ops.append((f"sm{t}", "alu0", t_softmax, [f"qk{t}"], 0))
            ops.append((f"pv{t}", "tc", t_gemm, [f"sm{t}"], 0))
    elif mode == "pingpong":
        last: dict[int, int] = {}  # each warpgroup's previous tile
        for t in range(n_tiles):
            g = t % 2
            if g in last:  # the previous tile's PV and this tile's QK^T, issued together
                p = last[g]
                ops.append((f"pv{p}", "tc", t_gemm, [f"sm{p}"], g))
                ops.append((f"qk{t}", "tc", t_gemm, [f"sm{p}"], g))
            else:
                ops.append((f"qk{t}", "tc", t_gemm, [], g))
            ops.append((f"sm{t}", f"alu{g}", t_softmax, [f"qk{t}"], g))
            last[g] = t
        for g, p in last.items():
            ops.append((f"pv{p}", "tc", t_gemm, [f"sm{p}"], g))
    elif mode == "intra":
        for t in range(n_tiles):
            ops.append((f"qk{t}", "tc", t_gemm, [f"sm{t - 1}"] if t else [], 0))
            if t:
                ops.append((f"pv{t - 1}", "tc", t_gemm, [f"sm{t - 1}"], 0))
            ops.append((f"sm{t}", "alu0", t_softmax, [f"qk{t}"], 0))
        ops.append((f"pv{n_tiles - 1}", "tc", t_gemm, [f"sm{n_tiles - 1}"], 0))
    else:
        raise ValueError(f"unknown mode {mode!r}")
    done: dict[str, float] = {}
    unit_free: dict[str, float] = {}
    pending = list(ops)
    while pending:
        # the next operation to start: earliest feasible start, program order breaking ties
        best = None
        for idx, (_, unit, _, deps, issuer) in enumerate(pending):
            if any(d not in done for d in deps):
                continue
            if unit == "tc" and any(u == "tc" and i == issuer for _, u, _, _, i in pending[:idx]):
                continue  # a warpgroup's GEMMs run in the order it issues them
            start = max([unit_free.get(unit, 0.0), *(done[d] for d in deps)])
            if best is None or start < best[0]:
                best = (start, idx)
        start, idx = best
        name, unit, dur, _, _ = pending.pop(idx)
        done[name] = start + dur
        unit_free[unit] = start + dur
    total = max(done.values())
    return {"time": total, "tensor_core_busy": 2 * n_tiles * t_gemm / total}


def steady_period(t_gemm: float, t_softmax: float, mode: str) -> float:
    """Time per tile once the schedule is in steady state (closed form)."""
    if mode == "serial":
        return 2 * t_gemm + t_softmax
    if mode == "pingpong":
        return max(2 * t_gemm, t_gemm + t_softmax / 2)
    if mode == "intra":
        return t_gemm + max(t_gemm, t_softmax)
    raise ValueError(f"unknown mode {mode!r}")


def fp8_attention(q, k, v, max_offset: int = 8, fp8=torch.float8_e4m3fn):
    """Attention whose P is rounded to FP8 before the PV GEMM, as in the FP8 Hopper kernel.

    P is computed as ``exp2(s*log2(e) - (max*log2(e) - max_offset))``, so its entries lie in
    ``[0, 2**max_offset]`` instead of ``[0, 1]``. The row sum, taken before the rounding,
    carries the same factor ``2**max_offset``, so the final division cancels it.
    """
    scale = q.shape[-1] ** -0.5
    s = (q @ k.transpose(-1, -2)) * scale * math.log2(math.e)
    m = s.amax(dim=-1, keepdim=True)
    p = torch.exp2(s - (m - max_offset))
    row_sum = p.sum(dim=-1, keepdim=True)
    p_fp8 = p.to(fp8).to(q.dtype)
    return (p_fp8 @ v) / row_sum
