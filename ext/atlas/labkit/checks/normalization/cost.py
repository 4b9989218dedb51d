"""Checks of the labs of ``normalization/cost.md``.

The chapter's checks: Checks of the normalization chapter's labs, and loaders of upstream
reference code.
"""

from __future__ import annotations

import functools
import typing

import torch

from atlas.labkit.checks.normalization.common import flash_attn_refs
from atlas.labkit.normalization.norms import add_rms_norm
from atlas.labkit.pinned import definitions

ROLE = "check"


@functools.cache
def megatron_bias_dropout_add():
    scope = definitions(
        "megatron",
        "megatron/core/fusions/fused_bias_dropout.py",
        ("_bias_dropout_add_func",),
        {"torch": torch, "Optional": typing.Optional, "Tuple": tuple},
    )
    return scope["_bias_dropout_add_func"]


def fused_matches_upstream(tokens: int = 16, width: int = 64, seed: int = 0) -> dict:
    """Our fused add+RMSNorm against two upstream pieces run in sequence: Megatron's residual
    add (``_bias_dropout_add_func``, dropout 0, with the sublayer's bias) and flash-attention's
    reference RMSNorm with a residual input and ``prenorm=True``."""
    torch.manual_seed(seed)
    x, residual = torch.randn(tokens, width), torch.randn(tokens, width)
    bias, weight = torch.randn(width), torch.rand(width) + 0.5
    bda = megatron_bias_dropout_add()
    # at inference Megatron adds in place, into x: give it a copy
    stream_megatron = bda((x.clone(), bias), residual.clone(), 0.0, False)
    out_ours, stream_ours = add_rms_norm(x + bias, residual, weight)
    out_fa, stream_fa = flash_attn_refs()["rms_norm_ref"](
        x + bias, weight, None, residual=residual, prenorm=True, eps=1e-6
    )
    return {
        "stream": torch.allclose(stream_ours, stream_megatron, atol=1e-6)
        and torch.allclose(stream_ours, stream_fa, atol=1e-6),
        "normed": torch.allclose(out_ours, out_fa, atol=1e-5),
    }


def sequence_parallel_add_norm(ranks: int = 4, tokens: int = 32, width: int = 64, seed: int = 0):
    """Row-parallel partial outputs of ``ranks`` devices, finished two ways: all-reduce, then
    residual add and RMSNorm on every token on every rank (TP); or reduce-scatter along the
    sequence, add and norm on each rank's tokens only, then all-gather (TP with SP). Returns
    whether the results agree and the tokens each rank normalises under each scheme."""
    torch.manual_seed(seed)
    partial = torch.randn(ranks, tokens, width)
    residual = torch.randn(tokens, width)
    weight = torch.rand(width) + 0.5
    dense_sum = partial.sum(0)  # all-reduce: every rank holds the full sum
    tp = [add_rms_norm(dense_sum, residual, weight)[0] for _ in range(ranks)]
    shards = partial.sum(0).chunk(ranks, dim=0)  # reduce-scatter: rank r keeps chunk r
    res_shards = residual.chunk(ranks, dim=0)
    sp = torch.cat([add_rms_norm(s, r, weight)[0] for s, r in zip(shards, res_shards, strict=True)])
    return {
        "match": all(torch.allclose(t, sp, atol=1e-6) for t in tp),
        "tokens_per_rank_tp": tokens,
        "tokens_per_rank_sp": shards[0].shape[0],
    }
