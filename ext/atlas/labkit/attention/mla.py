"""Multi-head latent attention (DeepSeek-V2/V3): naive, absorbed, and what the cache holds.

Per token, the hidden state ``x`` is compressed to a latent ``c = rmsnorm(x W_dkv)`` (``d_c``
wide) and a single rotary key ``k_r = rope(x W_kr)`` (``d_r`` wide) shared by all heads. Head
``h`` expands its key and value from the latent: ``k_h = c W_uk[h]^T`` (``d_nope``),
``v_h = c W_uv[h]^T`` (``d_v``); its query has a content part ``q_h`` and a rotary part
``q_rh``. The score is
``(q_h . k_h + q_rh . k_r) / sqrt(d_nope + d_r)``. Only ``c`` and ``k_r`` are cached.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

ROLE = "taught"


def rope(x: torch.Tensor, pos: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary embedding of ``x`` ``[T, ..., d]`` at positions ``pos`` ``[T]``: each pair
    ``(x[2i], x[2i+1])`` turns by the angle ``pos * base**(-2i/d)``."""
    d = x.shape[-1]
    freqs = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    ang = (pos.to(x.dtype)[:, None] * freqs[None, :]).view(len(pos), *[1] * (x.dim() - 2), d // 2)
    cos, sin = torch.cos(ang), torch.sin(ang)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x1 * sin + x2 * cos
    return out


@dataclass
class MLAWeights:
    w_dkv: torch.Tensor  # [d_model, d_c]      down-projection to the latent
    w_kr: torch.Tensor  # [d_model, d_r]       the shared rotary key
    w_uk: torch.Tensor  # [H, d_nope, d_c]     latent -> per-head key
    w_uv: torch.Tensor  # [H, d_v, d_c]        latent -> per-head value
    w_q: torch.Tensor  # [d_model, H, d_nope]  content query
    w_qr: torch.Tensor  # [d_model, H, d_r]    rotary query
    g_kv: torch.Tensor  # [d_c]                gain of the latent's RMSNorm

    @classmethod
    def random(cls, d_model, heads, d_c, d_r, d_nope, d_v, seed=0, dtype=torch.float64):
        g = torch.Generator().manual_seed(seed)

        def w(*shape, fan_in):
            return torch.randn(*shape, generator=g, dtype=dtype) / fan_in**0.5

        return cls(
            w_dkv=w(d_model, d_c, fan_in=d_model),
            w_kr=w(d_model, d_r, fan_in=d_model),
            w_uk=w(heads, d_nope, d_c, fan_in=d_c),
            w_uv=w(heads, d_v, d_c, fan_in=d_c),
            w_q=w(d_model, heads, d_nope, fan_in=d_model),
            w_qr=w(d_model, heads, d_r, fan_in=d_model),
            g_kv=1.0 + 0.1 * torch.randn(d_c, generator=g, dtype=dtype),
        )


def rms_norm(x: torch.Tensor, gain: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension. DeepSeek-V2/V3 normalise the latent after the
    down-projection, before it is cached and expanded (Megatron's ``kv_layernorm``); the rotary
    key is not normalised."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gain


def mla_cache(x: torch.Tensor, w: MLAWeights, pos: torch.Tensor):
    """What MLA caches per token: the normalised latent ``c`` ``[T, d_c]`` and the rotary key
    ``[T, d_r]``."""
    return rms_norm(x @ w.w_dkv, w.g_kv), rope(x @ w.w_kr, pos)


def mla_naive(x_q, pos_q, c, k_r, pos_k, w: MLAWeights, causal=True, rope_content=False):
    """Expand the cache into per-head keys and values, then ordinary attention.

    ``x_q`` ``[Tq, d_model]`` are the query tokens, ``c`` and ``k_r`` the cache of ``Tk`` tokens.
    Returns ``[Tq, H, d_v]``. ``rope_content=True`` also rotates the content query and key
    (RoPE on the whole head, without the decoupled part): what absorption cannot reproduce.
    """
    k_nope = torch.einsum("tc,hdc->thd", c, w.w_uk)  # [Tk, H, d_nope]
    v = torch.einsum("tc,hdc->thd", c, w.w_uv)  # [Tk, H, d_v]
    q = torch.einsum("tm,mhd->thd", x_q, w.w_q)  # [Tq, H, d_nope]
    if rope_content:
        q, k_nope = rope(q, pos_q), rope(k_nope, pos_k)
    q_r = rope(torch.einsum("tm,mhd->thd", x_q, w.w_qr), pos_q)  # [Tq, H, d_r]
    scale = (q.shape[-1] + q_r.shape[-1]) ** -0.5
    s = torch.einsum("qhd,khd->hqk", q, k_nope) + torch.einsum("qhd,kd->hqk", q_r, k_r)
    s = s * scale
    if causal:
        s = s.masked_fill(pos_k[None, None, :] > pos_q[None, :, None], float("-inf"))
    return torch.einsum("hqk,khd->qhd", torch.softmax(s, dim=-1), v)


def mla_absorbed(x_q, pos_q, c, k_r, pos_k, w: MLAWeights, causal=True):
    """The same attention without expanding the cache: absorb ``W_uk`` into the query and
    ``W_uv`` into the output.

    ``q_h . (c W_uk[h]^T) = (q_h W_uk[h]) . c``: each head's query moves into the latent space
    (``d_c`` wide) and scores against the cached latent directly, plus the rotary part against
    the shared rotary key. The weighted sum of latents is mapped to the head's value space at
    the end: ``sum_j p_j (c_j W_uv[h]^T) = (sum_j p_j c_j) W_uv[h]^T``. Every head reads the same
    ``[Tk, d_c + d_r]`` cache: attention with one key/value head of width ``d_c + d_r``.
    """
    q = torch.einsum("tm,mhd->thd", x_q, w.w_q)
    q_lat = torch.einsum("thd,hdc->thc", q, w.w_uk)  # [Tq, H, d_c]
    q_r = rope(torch.einsum("tm,mhd->thd", x_q, w.w_qr), pos_q)
    scale = (q.shape[-1] + q_r.shape[-1]) ** -0.5  # the scale of the original head dimension
    s = torch.einsum("qhc,kc->hqk", q_lat, c) + torch.einsum("qhd,kd->hqk", q_r, k_r)
    s = s * scale
    if causal:
        s = s.masked_fill(pos_k[None, None, :] > pos_q[None, :, None], float("-inf"))
    o_lat = torch.einsum("hqk,kc->qhc", torch.softmax(s, dim=-1), c)  # [Tq, H, d_c]
    return torch.einsum("qhc,hdc->qhd", o_lat, w.w_uv)


def absorbed_decode_intensity(heads, d_c, d_r, elem_bytes):
    """FLOPs per byte of absorbed MLA decode: all heads score ``d_c + d_r`` wide keys and sum
    ``d_c`` wide values, and read one ``d_c + d_r`` cache row per token (K and V are the same
    bytes)."""
    flops = 2 * heads * (d_c + d_r) + 2 * heads * d_c
    return flops / ((d_c + d_r) * elem_bytes)


def latent_query_residual(
    w: MLAWeights,
    x_q: torch.Tensor,
    pos_q: int,
    c: torch.Tensor,
    pos_k: torch.Tensor,
    head: int = 0,
) -> tuple[float, float]:
    """How well can one latent-space query reproduce a head's content scores against every key?

    Absorption needs a single vector ``q_lat`` (``d_c`` wide) with ``q_lat . c_j`` equal to the
    content score against key ``j`` for every ``j``. For one query ``x_q`` at position
    ``pos_q`` and ``T > d_c`` cached latents ``c`` at positions ``pos_k``, this fits ``q_lat``
    by least squares (``torch.linalg.lstsq``) to the scores of the expanded form, once without
    and once with RoPE on the content parts, and returns the two relative residuals
    ``|C q_lat - s| / |s|``. Without RoPE the exact answer exists (``W_uk^T q``) and the residual
    is rounding; with RoPE the needed query ``W_uk^T R_{j-i} q`` changes with ``j``, and no
    single ``q_lat`` fits unless every key sits at the same offset.
    """
    q = x_q @ w.w_q[:, head]  # [d_nope]
    k = c @ w.w_uk[head].T  # [T, d_nope]
    plain = k @ q
    q_rot = rope(q[None, None, :], torch.tensor([pos_q]))[0, 0]
    rotated = rope(k[:, None, :], pos_k)[:, 0] @ q_rot

    def residual(s: torch.Tensor) -> float:
        fit = torch.linalg.lstsq(c, s[:, None]).solution
        return float((c @ fit - s[:, None]).norm() / s.norm())

    return residual(plain), residual(rotated)
