"""Sparse attention: sliding windows with sinks, block-sparse tiles, top-k selection.

Masks follow FlashAttention's convention. With ``M`` queries and ``N`` keys, query row ``i``
stands at position ``i + N - M``; a window ``(left, right)`` lets it see keys from
``i + N - M - left`` to ``i + N - M + right`` (a negative bound is no bound), and the first
``sinks`` keys stay visible whatever the left bound says.
"""

from __future__ import annotations

import math

import torch

from atlas.labkit.attention.flash import NEG_INF, online_softmax_step

ROLE = "taught"


def window_allowed(m: int, n: int, left: int = -1, right: int = -1, sinks: int = 0):
    """Boolean ``[M, N]``: which keys each query may see."""
    i = torch.arange(m)[:, None] + (n - m)
    j = torch.arange(n)[None, :]
    allowed = torch.ones(m, n, dtype=torch.bool)
    if right >= 0:
        allowed &= j <= i + right
    if left >= 0:
        allowed &= (j >= i - left) | (j < sinks)
    return allowed


def block_mask(allowed: torch.Tensor, block_m: int, block_n: int) -> torch.Tensor:
    """Tile-level mask ``[ceil(M/Bm), ceil(N/Bn)]``: 0 empty, 1 partial, 2 full."""
    m, n = allowed.shape
    tm, tn = math.ceil(m / block_m), math.ceil(n / block_n)
    out = torch.zeros(tm, tn, dtype=torch.int8)
    for a in range(tm):
        for b in range(tn):
            tile = allowed[a * block_m : (a + 1) * block_m, b * block_n : (b + 1) * block_n]
            out[a, b] = 2 if bool(tile.all()) else int(bool(tile.any()))
    return out


def block_sparse_attention(q, k, v, tiles, block_m, block_n, allowed=None, scale=None):
    """Tiled attention that visits only the tiles ``tiles`` marks non-zero.

    Full tiles (2) need no mask; partial tiles (1) apply the token-level ``allowed`` mask.
    Returns ``(o, lse, visited)`` where ``visited`` counts the tiles computed.
    """
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    o = q.new_zeros(*q.shape[:-1], v.shape[-1])
    lse = q.new_full(q.shape[:-1], NEG_INF)
    visited = 0
    for a in range(tiles.shape[0]):
        i0 = a * block_m
        qi = q[..., i0 : i0 + block_m, :]
        rows = qi.shape[-2]
        m = q.new_full((*q.shape[:-2], rows), NEG_INF)
        ell = q.new_zeros(*q.shape[:-2], rows)
        acc = q.new_zeros(*q.shape[:-2], rows, v.shape[-1])
        for b in torch.nonzero(tiles[a]).flatten().tolist():
            j0 = b * block_n
            kj, vj = k[..., j0 : j0 + block_n, :], v[..., j0 : j0 + block_n, :]
            s = (qi @ kj.transpose(-1, -2)) * scale
            if tiles[a, b] == 1:
                s = s.masked_fill(~allowed[i0 : i0 + rows, j0 : j0 + kj.shape[-2]], NEG_INF)
            m, ell, acc = online_softmax_step(m, ell, acc, s, vj)
            visited += 1
        seen = ell > 0
        l_safe = torch.where(seen, ell, 1.0)  # a row with no visible key outputs zeros
        o[..., i0 : i0 + rows, :] = acc / l_safe[..., None]
        lse[..., i0 : i0 + rows] = torch.where(seen, m + torch.log(l_safe), NEG_INF)
    return o, lse, visited


class WindowCache:
    """The KV cache of one sliding-window layer during decode: the first ``sinks`` tokens and
    the last ``window + 1`` tokens (the window and the current one), nothing else."""

    def __init__(self, window: int, sinks: int = 0):
        self.window, self.sinks = window, sinks
        self.pos: list[int] = []
        self.k: list[torch.Tensor] = []
        self.v: list[torch.Tensor] = []

    def append(self, pos: int, k: torch.Tensor, v: torch.Tensor) -> None:
        self.pos.append(pos)
        self.k.append(k)
        self.v.append(v)
        keep = [i for i, p in enumerate(self.pos) if p < self.sinks or p >= pos - self.window]
        self.pos = [self.pos[i] for i in keep]
        self.k = [self.k[i] for i in keep]
        self.v = [self.v[i] for i in keep]

    def attend(self, q: torch.Tensor) -> torch.Tensor:
        """One query (``[d]``) against every cached token."""
        k, v = torch.stack(self.k), torch.stack(self.v)
        p = torch.softmax((k @ q) * q.shape[-1] ** -0.5, dim=0)
        return p @ v


def topk_indices(index_scores: torch.Tensor, topk: int) -> torch.Tensor:
    """The ``topk`` highest-scoring visible keys per query (``[T, topk]``), ``-1`` padded.

    ``index_scores`` ``[T, T]`` come from a cheap scorer (DeepSeek's lightning indexer); keys
    after the query are invisible.
    """
    t = index_scores.shape[0]
    i = torch.arange(t)
    scores = index_scores.masked_fill(i[None, :] > i[:, None], NEG_INF)
    values, idx = torch.topk(scores, min(topk, t), dim=-1)
    idx = idx.masked_fill(values == NEG_INF, -1)
    if topk > t:
        idx = torch.cat([idx, idx.new_full((t, topk - t), -1)], dim=-1)
    return idx


def topk_attention(q, k, v, indices, scale=None):
    """Each query attends only to the keys its row of ``indices`` names (gathered, not masked).

    ``q`` is ``[T, H, d]``, ``k`` and ``v`` are ``[T, H_kv, d]``; the selection is shared by all
    heads. Cost per query grows with ``topk``, not with ``T``.
    """
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    t, heads = q.shape[:2]
    group = heads // k.shape[1]
    pos = torch.arange(t)[:, None]
    valid = (indices >= 0) & (indices <= pos)  # [T, topk]
    safe = indices.clamp_min(0)
    kg = k[safe].repeat_interleave(group, dim=2)  # [T, topk, H, d]
    vg = v[safe].repeat_interleave(group, dim=2)
    s = torch.einsum("thd,tkhd->thk", q, kg) * scale
    s = s.masked_fill(~valid[:, None, :], NEG_INF)
    return torch.einsum("thk,tkhd->thd", torch.softmax(s, dim=-1), vg)


def add_learned_sink(o, lse, sink):
    """Fold a learned sink into a finished attention output (gpt-oss, FlashAttention-4).

    A sink is a virtual key with a learned score ``sink`` (one per head) and a zero value: it
    takes a share of the softmax mass and returns nothing. Given the output ``o`` and log-sum-exp
    ``lse`` of ordinary attention, only the denominator changes.
    """
    lse_new = torch.logaddexp(lse, sink)
    return o * torch.exp(lse - lse_new)[..., None], lse_new
