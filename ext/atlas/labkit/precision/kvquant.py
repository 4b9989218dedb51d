"""Quantizing the KV cache: KIVI's asymmetric groups and FP8 caches with their scales.

KIVI quantizes keys *per channel* (the statistics of one channel over a group of tokens) and
values *per token* (the statistics of one token over a group of channels), both asymmetric
with a scale and a zero point per group. Keys can only be quantized once a whole group of
tokens has arrived, so the newest tokens wait in full precision; KIVI keeps a full-precision
window of the most recent tokens for values too. An FP8 cache divides by one scale, ``amax /
448`` for E4M3, before rounding, and multiplies it back when attention reads the cache.
"""

from __future__ import annotations

import torch

from atlas.labkit.precision.formats import E4M3, round_to_format

ROLE = "taught"


def quantize_groups(x: torch.Tensor, bits: int, group: int, axis: int) -> torch.Tensor:
    """Asymmetric ``bits``-bit fake quantization of a 2-D ``[tokens, channels]`` tensor.

    Groups are ``group`` consecutive entries along ``axis``: ``axis=0`` groups tokens, so
    each (group of tokens, channel) pair has its own range (per-channel, KIVI's keys);
    ``axis=1`` groups channels within a token (per-token, KIVI's values). The length along
    ``axis`` must be a multiple of ``group``.
    """
    t = x.float() if axis == 1 else x.float().T
    rows, cols = t.shape
    view = t.reshape(rows, cols // group, group)
    lo = view.amin(dim=-1, keepdim=True)
    hi = view.amax(dim=-1, keepdim=True)
    scale = ((hi - lo) / (2**bits - 1)).clamp(min=1e-8)
    q = torch.round((view - lo) / scale).clamp(0, 2**bits - 1)
    out = (q * scale + lo).reshape(rows, cols)
    return out if axis == 1 else out.T


def kivi(
    k: torch.Tensor, v: torch.Tensor, bits: int = 2, group: int = 32, residual: int = 128
) -> tuple[torch.Tensor, torch.Tensor]:
    """The cache of one head as attention reads it after KIVI: ``[tokens, head_dim]`` each.

    The newest ``residual`` tokens stay in full precision. Older keys are quantized per
    channel in whole groups of ``group`` tokens (the leftover tokens that do not fill a group
    wait in full precision too); older values are quantized per token in groups of
    ``group`` channels.
    """
    tokens = k.shape[0]
    old = max(tokens - residual, 0)
    k_old = old // group * group
    k_hat, v_hat = k.clone().float(), v.clone().float()
    if k_old:
        k_hat[:k_old] = quantize_groups(k[:k_old], bits, group, axis=0)
    if old:
        v_hat[:old] = quantize_groups(v[:old], bits, group, axis=1)
    return k_hat, v_hat


def fp8_scale(amax: torch.Tensor | float) -> torch.Tensor:
    """The E4M3 scale that maps ``amax`` onto the format's largest value, 448."""
    return torch.as_tensor(amax, dtype=torch.float32) / E4M3.max


def fp8_roundtrip(x: torch.Tensor, scale: torch.Tensor | float) -> torch.Tensor:
    """Store ``x / scale`` in E4M3 (round to nearest even, saturating at ±448), read it back
    multiplied by ``scale``. ``scale`` broadcasts: a scalar (per tensor, static or dynamic)
    or one per token (``[tokens, 1]``)."""
    scale = torch.as_tensor(scale, dtype=torch.float32)
    return round_to_format(x.float() / scale, E4M3).float() * scale


def decode_step_time(
    weight_bytes: float, kv_bytes: float, flops: float, peak_flops: float, bandwidth: float
) -> float:
    """Roofline bound of one decode step: every weight and every cached key and value of the
    batch is read once, so the step takes ``max(FLOPs / peak, bytes / bandwidth)``."""
    return max(flops / peak_flops, (weight_bytes + kv_bytes) / bandwidth)
