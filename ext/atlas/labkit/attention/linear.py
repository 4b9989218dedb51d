"""Linear attention, gated and with the delta rule: recurrent, parallel and chunkwise forms.

Shapes are ``[..., T, d]`` (leading dimensions are batch and heads). The state ``S`` is
``[..., d_k, d_v]``; a step reads it with the query, ``o_t = (scale * q_t) S_t``.

- Linear attention with a gate: ``S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t``. ``g_t`` (log
  decay, ``<= 0``) is ``[..., T, d_k]`` for a per-channel gate (GLA) or ``[..., T, 1]`` for one
  scalar per step (Mamba-2's SSD, RetNet with a constant); ``None`` is no decay.
- The gated delta rule: ``S_t = exp(g_t) S_{t-1} + beta_t k_t^T (v_t - k_t exp(g_t) S_{t-1})``,
  i.e. the decayed state is corrected toward storing ``v_t`` under key ``k_t`` with step
  ``beta_t``. ``g = None`` is DeltaNet.
"""

from __future__ import annotations

import torch

ROLE = "taught"


def _scale(q, scale):
    return q * (q.shape[-1] ** -0.5 if scale is None else scale)


def linear_recurrent(q, k, v, log_decay=None, scale=None, state=None):
    """One step at a time, as a decoder runs it: ``O(d_k d_v)`` per token, state kept."""
    q = _scale(q, scale)
    s = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1]) if state is None else state
    out = []
    for t in range(q.shape[-2]):
        if log_decay is not None:
            s = torch.exp(log_decay[..., t, :])[..., None] * s
        s = s + k[..., t, :, None] * v[..., t, None, :]
        out.append(q[..., t, None, :] @ s)
    return torch.cat(out, dim=-2), s


def linear_parallel(q, k, v, log_decay=None, scale=None):
    """All at once, like softmax attention without the softmax: ``O = (A * M) V`` with the
    decay-weighted causal mask ``M_ij = exp(G_i - G_j)`` for ``j <= i`` (``G`` the cumulative
    log decay). ``O(T^2)`` work, no state."""
    q = _scale(q, scale)
    t = q.shape[-2]
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    if log_decay is None:
        a = (q @ k.transpose(-1, -2)).masked_fill(~causal, 0.0)
        return a @ v
    g = log_decay.expand(*q.shape[:-1], q.shape[-1]).cumsum(dim=-2)  # [..., T, d_k]
    diff = g[..., :, None, :] - g[..., None, :, :]  # [..., T, T, d_k]
    decay = torch.exp(diff.masked_fill(~causal[..., None], float("-inf")))
    a = torch.einsum("...ic,...jc,...ijc->...ij", q, k, decay)
    return a @ v


def linear_chunkwise(q, k, v, chunk, log_decay=None, scale=None, state=None):
    """Chunks of ``C`` steps: matmuls inside a chunk, the recurrence only between chunks.

    With ``G`` the log decay accumulated inside the chunk and ``S`` the state entering it:
    ``O = (Q * e^G) S + ((Q * e^G)(K * e^-G)^T masked causal) V`` and
    ``S' = e^{G_last} * S + (K * e^{G_last - G})^T V``.
    """
    q = _scale(q, scale)
    dk = q.shape[-1]
    s = q.new_zeros(*q.shape[:-2], dk, v.shape[-1]) if state is None else state
    out = []
    for c0 in range(0, q.shape[-2], chunk):
        qc, kc, vc = (x[..., c0 : c0 + chunk, :] for x in (q, k, v))
        n = qc.shape[-2]
        if log_decay is None:
            g = q.new_zeros(*qc.shape[:-1], dk)
        else:
            g = log_decay[..., c0 : c0 + chunk, :].expand(*qc.shape[:-1], dk).cumsum(dim=-2)
        q_in, k_in = qc * torch.exp(g), kc * torch.exp(-g)
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        intra = (q_in @ k_in.transpose(-1, -2)).masked_fill(~causal, 0.0) @ vc
        out.append(q_in @ s + intra)
        g_last = g[..., -1:, :]  # [..., 1, d_k]
        decay_k = kc * torch.exp(g_last - g)  # each key decayed to the end of the chunk
        s = torch.exp(g_last).transpose(-1, -2) * s + decay_k.transpose(-1, -2) @ vc
    return torch.cat(out, dim=-2), s


def delta_recurrent(q, k, v, beta, log_decay=None, scale=None, state=None):
    """The (gated) delta rule one step at a time. ``beta`` and ``log_decay`` are ``[..., T]``."""
    q = _scale(q, scale)
    s = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1]) if state is None else state
    out = []
    for t in range(q.shape[-2]):
        if log_decay is not None:
            s = torch.exp(log_decay[..., t, None, None]) * s
        kt, vt = k[..., t, :], v[..., t, :]
        pred = (kt[..., None, :] @ s)[..., 0, :]  # what the state returns for k_t
        u = beta[..., t, None] * (vt - pred)  # the correction written back
        s = s + kt[..., :, None] * u[..., None, :]
        out.append(q[..., t, None, :] @ s)
    return torch.cat(out, dim=-2), s


def delta_chunkwise(q, k, v, beta, chunk, log_decay=None, scale=None, state=None):
    """The (gated) delta rule by chunks, through the UT transform of the WY representation.

    Inside a chunk the corrections ``U`` solve a unit lower-triangular system,
    ``(I + A) U = diag(beta) V - diag(beta e^g) K S`` with
    ``A_ij = beta_i e^{g_i - g_j} k_i . k_j`` for ``j < i``. With ``T = (I + A)^-1``:
    ``W = T diag(beta e^g) K``, ``U = T diag(beta) V - W S``; then
    ``O = diag(e^g) Q S + ((Q K^T) * e^{g_i - g_j}, j <= i) U`` and
    ``S' = e^{g_last} S + (K * e^{g_last - g})^T U``.
    """
    q = _scale(q, scale)
    s = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1]) if state is None else state
    out = []
    for c0 in range(0, q.shape[-2], chunk):
        qc, kc, vc = (x[..., c0 : c0 + chunk, :] for x in (q, k, v))
        bc = beta[..., c0 : c0 + chunk]
        n = qc.shape[-2]
        if log_decay is None:
            g = bc.new_zeros(bc.shape)
        else:
            g = log_decay[..., c0 : c0 + chunk].cumsum(dim=-1)  # [..., C]
        decay = torch.exp(g[..., :, None] - g[..., None, :]).tril()  # e^{g_i - g_j}, j <= i
        kk = kc @ kc.transpose(-1, -2)
        a = (bc[..., :, None] * kk * decay).tril(-1)
        eye = torch.eye(n, dtype=q.dtype)
        w = torch.linalg.solve_triangular(
            eye + a, (bc * torch.exp(g))[..., None] * kc, upper=False, unitriangular=True
        )
        u_tilde = torch.linalg.solve_triangular(
            eye + a, bc[..., None] * vc, upper=False, unitriangular=True
        )
        u = u_tilde - w @ s
        intra = ((qc @ kc.transpose(-1, -2)) * decay) @ u
        out.append(torch.exp(g)[..., None] * (qc @ s) + intra)
        g_last = g[..., -1:]
        decay_k = kc * torch.exp(g_last - g)[..., None]  # each key decayed to the chunk's end
        s = torch.exp(g_last)[..., None] * s + decay_k.transpose(-1, -2) @ u
    return torch.cat(out, dim=-2), s
