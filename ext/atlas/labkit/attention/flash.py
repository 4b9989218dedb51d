"""Attention, naive and tiled: the online softmax, the recomputed backward, counted traffic.

Shapes: ``q`` is ``[..., M, d]``, ``k`` is ``[..., N, d]``, ``v`` is ``[..., N, dv]``; leading
dimensions (batch, heads) broadcast. A causal mask is aligned to the bottom right, as in
FlashAttention: query row ``i`` sees key ``j`` when ``j <= i + N - M``.
"""

from __future__ import annotations

import math

import torch

ROLE = "taught"

NEG_INF = float("-inf")


def causal_allowed(m: int, n: int, row0: int = 0, col0: int = 0, rows=None, cols=None):
    """Boolean ``[rows, cols]`` block of the causal mask starting at ``(row0, col0)``."""
    rows = m if rows is None else rows
    cols = n if cols is None else cols
    i = torch.arange(row0, row0 + rows)[:, None]
    j = torch.arange(col0, col0 + cols)[None, :]
    return j <= i + (n - m)


def naive_attention(q, k, v, causal=False, scale=None, allowed=None):
    """Softmax attention through the full ``[M, N]`` score matrix; returns ``(o, lse)``."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    m, n = q.shape[-2], k.shape[-2]
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(~causal_allowed(m, n), NEG_INF)
    if allowed is not None:
        s = s.masked_fill(~allowed, NEG_INF)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)  # a fully masked row has no keys: p = 0
    return p @ v, lse


class HBM:
    """Counts the bytes an algorithm moves between HBM and on-chip memory."""

    def __init__(self) -> None:
        self.read_bytes = 0
        self.written_bytes = 0

    def read(self, t: torch.Tensor) -> torch.Tensor:
        self.read_bytes += t.numel() * t.element_size()
        return t

    def write(self, t: torch.Tensor) -> torch.Tensor:
        self.written_bytes += t.numel() * t.element_size()
        return t

    @property
    def total(self) -> int:
        return self.read_bytes + self.written_bytes


def standard_attention(q, k, v, causal=False, scale=None, hbm=None):
    """Attention as three kernels that round-trip S and P through HBM (the paper's baseline)."""
    hbm = hbm or HBM()
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    m, n = q.shape[-2], k.shape[-2]
    s = hbm.write((hbm.read(q) @ hbm.read(k).transpose(-1, -2)) * scale)  # kernel 1: S = QK^T
    s = hbm.read(s)  # kernel 2: P = softmax(S)
    if causal:
        s = s.masked_fill(~causal_allowed(m, n), NEG_INF)
    p = hbm.write(torch.softmax(s, dim=-1))
    return hbm.write(hbm.read(p) @ hbm.read(v))  # kernel 3: O = PV


def online_softmax_step(m, ell, acc, s, v, threshold=None, stats=None):
    """Fold one tile of scores ``s`` (``[rows, cols]``) and values ``v`` into ``(m, ell, acc)``.

    ``m`` is the running row maximum, ``ell`` the running sum of ``exp(s - m)``, ``acc`` the
    running unnormalised output. ``threshold`` (natural-log units) keeps the old maximum
    unless the new one exceeds it by more than that much: FlashAttention-4's lazy rescaling.
    """
    m_new = torch.maximum(m, s.amax(dim=-1))
    if threshold is not None:
        m_new = torch.where(m_new - m <= threshold, m, m_new)
    m_safe = torch.where(m_new == NEG_INF, 0.0, m_new)  # rows that have seen no key yet
    alpha = torch.exp(m - m_safe)  # rescales what was accumulated under the old maximum
    p = torch.exp(s - m_safe[..., None])
    ell = alpha * ell + p.sum(dim=-1)
    acc = alpha[..., None] * acc + p @ v
    if stats is not None:
        stats["tiles"] = stats.get("tiles", 0) + 1
        stats["rescales"] = stats.get("rescales", 0) + int(((m_new != m) & (m > NEG_INF)).any())
        stats["max_p"] = max(stats.get("max_p", 0.0), float(p.max()))
    return m_new, ell, acc


def tiled_attention(
    q, k, v, block_m=64, block_n=64, causal=False, scale=None, hbm=None, threshold=None, stats=None
):
    """FlashAttention's forward: tiles of Q against tiles of K and V, softmax online.

    Each query tile keeps ``(m, ell, acc)`` on chip while it walks the key tiles; only Q, K,
    V are read and only O and the log-sum-exp ``lse = m + log ell`` are written. Under a causal
    mask, key tiles entirely above the diagonal are skipped. Returns ``(o, lse)``.
    """
    hbm = hbm or HBM()
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    m_len, n_len = q.shape[-2], k.shape[-2]
    lead = q.shape[:-2]
    o = q.new_empty(*lead, m_len, v.shape[-1])
    lse = q.new_empty(*lead, m_len)
    for i0 in range(0, m_len, block_m):
        qi = hbm.read(q[..., i0 : i0 + block_m, :])
        rows = qi.shape[-2]
        m = q.new_full((*lead, rows), NEG_INF)
        ell = q.new_zeros(*lead, rows)
        acc = q.new_zeros(*lead, rows, v.shape[-1])
        last_key = i0 + rows - 1 + n_len - m_len  # the last key the tile's last row may see
        for j0 in range(0, n_len, block_n):
            if causal and j0 > last_key:
                break
            kj = hbm.read(k[..., j0 : j0 + block_n, :])
            vj = hbm.read(v[..., j0 : j0 + block_n, :])
            s = (qi @ kj.transpose(-1, -2)) * scale
            if causal:
                keep = causal_allowed(m_len, n_len, i0, j0, rows, kj.shape[-2])
                s = s.masked_fill(~keep, NEG_INF)
            m, ell, acc = online_softmax_step(m, ell, acc, s, vj, threshold, stats)
        l_safe = torch.where(ell == 0, 1.0, ell)  # a row with no visible key outputs zeros
        o[..., i0 : i0 + rows, :] = hbm.write(acc / l_safe[..., None])
        lse[..., i0 : i0 + rows] = hbm.write(m + torch.log(ell))
    return o, lse


def flash_backward(q, k, v, o, lse, do, block_m=64, block_n=64, causal=False, scale=None):
    """The backward pass from the saved ``lse``: P is recomputed tile by tile, never stored.

    With ``D = rowsum(dO * O)``: ``P = exp(S - lse)``, ``dV = P^T dO``, ``dP = dO V^T``,
    ``dS = P * (dP - D)``, ``dQ = dS K * scale``, ``dK = dS^T Q * scale``. The outer loop is
    over key tiles (each owns its dK, dV), the inner over query tiles (dQ accumulates).
    """
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    m_len, n_len = q.shape[-2], k.shape[-2]
    delta = (do * o).sum(dim=-1)
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    for j0 in range(0, n_len, block_n):
        kj, vj = k[..., j0 : j0 + block_n, :], v[..., j0 : j0 + block_n, :]
        cols = kj.shape[-2]
        for i0 in range(0, m_len, block_m):
            qi, doi = q[..., i0 : i0 + block_m, :], do[..., i0 : i0 + block_m, :]
            rows = qi.shape[-2]
            if causal and j0 > i0 + rows - 1 + n_len - m_len:
                continue
            s = (qi @ kj.transpose(-1, -2)) * scale
            if causal:
                s = s.masked_fill(~causal_allowed(m_len, n_len, i0, j0, rows, cols), NEG_INF)
            p = torch.exp(s - lse[..., i0 : i0 + rows, None])
            dv[..., j0 : j0 + cols, :] += p.transpose(-1, -2) @ doi
            dp = doi @ vj.transpose(-1, -2)
            ds = p * (dp - delta[..., i0 : i0 + rows, None])
            dq[..., i0 : i0 + rows, :] += (ds @ kj) * scale
            dk[..., j0 : j0 + cols, :] += (ds.transpose(-1, -2) @ qi) * scale
    return dq, dk, dv


def standard_traffic(m, n, d, dv, elem_bytes):
    """Bytes the three-kernel baseline moves: Q, K, V and O once, S and P twice each."""
    return elem_bytes * (m * d + n * d + 4 * m * n + n * dv + m * dv)


def tiled_traffic(m, n, d, dv, block_m, block_n, elem_bytes, causal=False):
    """Bytes the tiled kernel moves: Q, O and lse once; K and V once per query tile."""
    kv_rows = 0
    for i0 in range(0, m, block_m):
        rows = min(block_m, m - i0)
        if causal:
            visible = max(0, min(n, i0 + rows + n - m))  # keys the tile's last row sees
            tiles = math.ceil(visible / block_n)
        else:
            tiles = math.ceil(n / block_n)
        kv_rows += min(tiles * block_n, n)
    return elem_bytes * (m * d + kv_rows * (d + dv) + m * dv + m)
