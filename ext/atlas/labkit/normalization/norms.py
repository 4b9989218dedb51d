"""Normalisation layers in plain torch, written to be read next to source/normalization/."""

from __future__ import annotations

import torch

ROLE = "taught"


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm: divide each row by its root mean square, then scale by a learned gain.
    Computed in fp32 and cast back, as production kernels do."""
    x32 = x.float()
    inv_rms = torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (x32 * inv_rms * weight.float()).to(x.dtype)


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """LayerNorm: subtract each row's mean, divide by its standard deviation (biased), then an
    affine map."""
    x32 = x.float()
    centred = x32 - x32.mean(dim=-1, keepdim=True)
    inv_std = torch.rsqrt(centred.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (centred * inv_std * weight.float() + bias.float()).to(x.dtype)


def add_rms_norm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6
) -> tuple[torch.Tensor, torch.Tensor]:
    """The fused residual add and RMSNorm of a Pre-LN stack: one pass reads the sublayer output
    and the residual, writes the new residual stream and the normalised input of the next
    sublayer. Returns (normalised, new residual)."""
    stream = x.float() + residual.float()
    return rms_norm(stream, weight, eps).to(x.dtype), stream.to(residual.dtype)


def qk_norm_logits(
    q: torch.Tensor,
    k: torch.Tensor,
    q_gain: torch.Tensor | None = None,
    k_gain: torch.Tensor | None = None,
    eps: float = 1e-6,
) -> torch.Tensor:
    """Attention logits q k^T / sqrt(d) per head, with QK-norm (RMSNorm of each query and key
    vector over the head dimension) when gains are given, and without it otherwise.
    q: [heads, sq, d], k: [heads, sk, d]."""
    d = q.shape[-1]
    if q_gain is not None:
        q = rms_norm(q, q_gain, eps)
        k = rms_norm(k, k_gain, eps)
    return q @ k.transpose(-1, -2) / d**0.5


def qk_logit_bound(d: int, q_gain: torch.Tensor, k_gain: torch.Tensor) -> float:
    """The largest logit QK-norm allows: each normalised vector has norm at most
    sqrt(d) * max|gain|, so |q.k| / sqrt(d) <= sqrt(d) * max|g_q| * max|g_k|."""
    return d**0.5 * q_gain.abs().max().item() * k_gain.abs().max().item()
