"""Check tensor-parallel attention projections and MLP against their dense equivalents.

The layers under test are passed in (nano-vllm's own ``linear`` module, loaded from its git
objects by ``atlas.labkit.serving.nanovllm.load_linear``), so the check runs upstream code,
not a copy. Each rank builds the layers, loads its shard of the full weights through the
layers' own ``weight_loader``s, and computes a grouped-query attention block and a SwiGLU MLP
on its heads and columns; the row-parallel output projections all-reduce the partial sums.
"""

from __future__ import annotations

import types

import torch
import torch.nn.functional as F


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention over ``[tokens, heads, dim]`` with grouped key/value heads."""
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    scores = torch.einsum("thd,shd->hts", q, k) / q.shape[-1] ** 0.5
    mask = torch.ones(q.shape[0], k.shape[0], dtype=torch.bool).tril()
    out = torch.einsum("hts,shd->thd", scores.masked_fill(~mask, -torch.inf).softmax(-1), v)
    return out.reshape(q.shape[0], -1)


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
            _attention(
                q.view(tokens, local_heads, head_dim),
                k.view(tokens, local_kv, head_dim),
                v.view(tokens, local_kv, head_dim),
            )
        )
        g, u = gate_up(x).chunk(2, -1)
        mlp = down(F.silu(g) * u)

        dense_attn = (
            _attention(
                (x @ wq.T).view(tokens, heads, head_dim),
                (x @ wk.T).view(tokens, kv_heads, head_dim),
                (x @ wv.T).view(tokens, kv_heads, head_dim),
            )
            @ wo.T
        )
        dense_mlp = (F.silu(x @ wg.T) * (x @ wu.T)) @ wd.T
    return {
        "qkv_rows": qkv.weight.shape[0],
        "gate_up_rows": gate_up.weight.shape[0],
        "attention_ok": torch.allclose(attn, dense_attn, atol=1e-12),
        "mlp_ok": torch.allclose(mlp, dense_mlp, atol=1e-12),
    }
