"""Checks of the normalization chapter's labs, and loaders of upstream reference code.

Upstream functions run from the pins (read through ``atlas.upstream``): flash-attention's
``rms_norm_ref`` and ``layer_norm_ref`` (pure-torch references of its fused Triton kernels),
Megatron-LM's ``_bias_dropout_add_func`` (the residual add of its transformer layer) and
its ``L2Norm`` (the QK-norm used with ``qk_l2_norm``).
"""

from __future__ import annotations

import functools
import typing

import torch
import torch.nn.functional as F

from atlas.labkit.pinned import definitions
from atlas.labkit.normalization.norms import add_rms_norm
from atlas.labkit.normalization.stacks import HyperConnection, Stack, grad_norms_per_layer, sinkhorn


@functools.cache
def flash_attn_refs() -> dict:
    return definitions(
        "flash-attention",
        "flash_attn/ops/triton/layer_norm.py",
        ("layer_norm_ref", "rms_norm_ref"),
        {"torch": torch, "F": F},
    )


@functools.cache
def megatron_bias_dropout_add():
    scope = definitions(
        "megatron",
        "megatron/core/fusions/fused_bias_dropout.py",
        ("_bias_dropout_add_func",),
        {"torch": torch, "Optional": typing.Optional, "Tuple": typing.Tuple},
    )
    return scope["_bias_dropout_add_func"]


@functools.cache
def megatron_l2norm() -> type:
    class _Protocol:  # LayerNormInterface is a typing.Protocol; a plain base stands in
        pass

    scope = definitions(
        "megatron",
        "megatron/core/transformer/torch_norm.py",
        ("L2Norm",),
        {"torch": torch, "LayerNormInterface": _Protocol, "jit_fuser": lambda f: f},
    )
    return scope["L2Norm"]


def last_layer_gradients(depths=(12, 48), width: int = 64, seed: int = 0) -> dict:
    """Gradient norm of the last block's output matrix for Post-LN and Pre-LN stacks of each
    depth, same data and seed."""
    out = {}
    for placement in ("post", "pre"):
        for depth in depths:
            torch.manual_seed(seed)
            stack = Stack(width, depth, placement)
            x, target = torch.randn(256, width), torch.randn(256, width)
            out[placement, depth] = grad_norms_per_layer(stack, x, target)[-1]
    return out


def residual_gradient_flow(depth: int = 64, width: int = 32, scale: float = 0.2, seed: int = 0):
    torch.set_default_dtype(torch.float64)
    try:
        return _flow(depth, width, scale, seed)
    finally:
        torch.set_default_dtype(torch.float32)


def _flow(depth, width, scale, seed):
    """Gradient of sum(output * u) with respect to the input of a chain of linear maps, with and
    without identity skips, by autograd and by the explicit product of Jacobians."""
    torch.manual_seed(seed)
    ws = [torch.randn(width, width) * scale / width**0.5 for _ in range(depth)]
    x = torch.randn(width, requires_grad=True)
    u = torch.randn(width)
    res = {}
    for kind in ("plain", "residual"):
        h = x
        jac = torch.eye(width)
        for w in ws:
            h = w @ h if kind == "plain" else h + w @ h
            jac = (w if kind == "plain" else torch.eye(width) + w) @ jac
        (g,) = torch.autograd.grad((h * u).sum(), x)
        res[kind] = (g, jac.T @ u)
    return res


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
    sp = torch.cat([add_rms_norm(s, r, weight)[0] for s, r in zip(shards, res_shards)])
    return {
        "match": all(torch.allclose(t, sp, atol=1e-6) for t in tp),
        "tokens_per_rank_tp": tokens,
        "tokens_per_rank_sp": shards[0].shape[0],
    }


def hyper_connection_n1(tokens: int = 8, width: int = 16, seed: int = 0) -> bool:
    """A Hyper-Connections wrapper with one stream, at its initialisation, against the plain
    residual x + F(x) with the same sublayer."""
    torch.manual_seed(seed)
    layer = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU())
    x = torch.randn(tokens, width)
    hc = HyperConnection(layer, n=1)
    return torch.allclose(hc(x[None])[0], x + layer(x))


def mixing_products(depth: int = 60, n: int = 4, seed: int = 0) -> dict:
    """Largest singular value of the product of ``depth`` stream-mixing matrices: unconstrained
    (identity plus learned noise, as HC may drift to) against Sinkhorn-projected (mHC)."""
    torch.manual_seed(seed)
    free = torch.eye(n)
    ds = torch.eye(n)
    worst_row = 0.0
    for _ in range(depth):
        noise = 0.3 * torch.randn(n, n)
        free = (torch.eye(n) + noise) @ free
        m = sinkhorn(2.0 * torch.eye(n) + noise)
        worst_row = max(worst_row, (m.sum(-1) - 1).abs().max().item(), (m.sum(-2) - 1).abs().max().item())
        ds = m @ ds
    return {
        "free": torch.linalg.matrix_norm(free, ord=2).item(),
        "constrained": torch.linalg.matrix_norm(ds, ord=2).item(),
        "stochastic_error": worst_row,
    }
