"""Checks of the labs of ``post-training/weight-sync.md``.

The chapter's checks: upstream code at the pins, fakes, toy models.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from atlas.labkit.checks.post_training.common import _QUIET, upstream_defs

ROLE = "check"


def dense_hf_weights(s, ffn: int, layers: int = 2, seed: int = 0) -> dict[str, torch.Tensor]:
    """Random dense weights of a Llama-shaped stack in Hugging Face layout and names
    (``layers.{i}.q_proj.weight`` ...), the reference the resharded weights must equal."""
    g = torch.Generator().manual_seed(seed)
    q, kv = s.heads * s.head_dim, s.groups * s.head_dim
    shapes = {
        "q_proj.weight": (q, s.hidden),
        "k_proj.weight": (kv, s.hidden),
        "v_proj.weight": (kv, s.hidden),
        "o_proj.weight": (s.hidden, q),
        "gate_proj.weight": (ffn, s.hidden),
        "up_proj.weight": (ffn, s.hidden),
        "down_proj.weight": (s.hidden, ffn),
        "input_layernorm.weight": (s.hidden,),
        "post_attention_layernorm.weight": (s.hidden,),
    }
    return {
        f"layers.{i}.{k}": torch.randn(*shape, generator=g)
        for i in range(layers)
        for k, shape in shapes.items()
    }


def _tp_attrs(t: torch.Tensor, parallel: bool, dim: int) -> torch.Tensor:
    t = t.clone()
    t.tensor_model_parallel, t.partition_dim, t.partition_stride = parallel, dim, 1
    return t


def megatron_tp_shards(
    dense: dict[str, torch.Tensor], s, tp: int, rank: int
) -> dict[str, torch.Tensor]:
    """Rank ``rank``'s shards, in Megatron-LM's names and layout, of the dense weights: Q, K and
    V fused and grouped by query group, then cut by groups (column-parallel); gate and up fused
    as ``[gate_r; up_r]`` of this rank's rows; the output and down projections cut by input
    columns (row-parallel); norms whole on every rank. Built from the definitions, not from
    the code under test."""
    out: dict[str, torch.Tensor] = {}
    layers = sorted({k.rsplit(".", 2)[0] for k in dense})
    rep = s.heads // s.groups
    for layer in layers:
        w = {k.rsplit(".", 2)[1]: v for k, v in dense.items() if k.startswith(layer + ".")}
        q = w["q_proj"].view(s.groups, rep, s.head_dim, s.hidden)
        k = w["k_proj"].view(s.groups, 1, s.head_dim, s.hidden)
        v = w["v_proj"].view(s.groups, 1, s.head_dim, s.hidden)
        qkv = torch.cat([q, k, v], dim=1).reshape(-1, s.hidden)
        out[f"{layer}.linear_qkv.weight"] = _tp_attrs(qkv.chunk(tp, 0)[rank], True, 0)
        out[f"{layer}.linear_proj.weight"] = _tp_attrs(w["o_proj"].chunk(tp, 1)[rank], True, 1)
        fc1 = torch.cat([w["gate_proj"].chunk(tp, 0)[rank], w["up_proj"].chunk(tp, 0)[rank]])
        out[f"{layer}.linear_fc1.weight"] = _tp_attrs(fc1, True, 0)
        out[f"{layer}.linear_fc2.weight"] = _tp_attrs(w["down_proj"].chunk(tp, 1)[rank], True, 1)
        for norm in ("input_layernorm", "post_attention_layernorm"):
            out[f"{layer}.{norm}.weight"] = _tp_attrs(w[norm], False, -1)
    return out


_SLIME_NAMES = {
    "linear_qkv.weight": "self_attention.linear_qkv.weight",
    "linear_proj.weight": "self_attention.linear_proj.weight",
    "linear_fc1.weight": "mlp.linear_fc1.weight",
    "linear_fc2.weight": "mlp.linear_fc2.weight",
    "input_layernorm.weight": "self_attention.linear_qkv.layer_norm_weight",
    "post_attention_layernorm.weight": "mlp.linear_fc1.layer_norm_weight",
}


def slime_reshard(local: dict[str, torch.Tensor], s) -> dict[str, torch.Tensor]:
    """slime's path at the pin on this rank: ``all_gather_param`` (update_weight/common.py) on
    each shard, then ``convert_qwen2_to_hf`` (megatron_to_hf/qwen2.py) on the full tensor; the
    names mapped back to ours (``layers.{i}.q_proj.weight``) for comparison."""
    import re

    import torch.distributed as dist

    mpu = types.SimpleNamespace(
        get_tensor_model_parallel_world_size=dist.get_world_size,
        get_tensor_model_parallel_group=lambda: None,
    )
    gather = upstream_defs(
        "slime",
        "slime/backends/megatron_utils/update_weight/common.py",
        ("all_gather_param",),
        {"torch": torch, "dist": dist, "mpu": mpu},
    )["all_gather_param"]
    convert = upstream_defs(
        "slime",
        "slime/backends/megatron_utils/megatron_to_hf/qwen2.py",
        ("convert_qwen2_to_hf",),
        {"torch": torch, "re": re},
    )["convert_qwen2_to_hf"]
    args = types.SimpleNamespace(
        kv_channels=s.head_dim,
        hidden_size=s.hidden,
        num_attention_heads=s.heads,
        num_query_groups=s.groups,
    )
    back = {
        "self_attn.q_proj.weight": "q_proj.weight",
        "self_attn.k_proj.weight": "k_proj.weight",
        "self_attn.v_proj.weight": "v_proj.weight",
        "self_attn.o_proj.weight": "o_proj.weight",
        "mlp.gate_proj.weight": "gate_proj.weight",
        "mlp.up_proj.weight": "up_proj.weight",
        "mlp.down_proj.weight": "down_proj.weight",
        "input_layernorm.weight": "input_layernorm.weight",
        "post_attention_layernorm.weight": "post_attention_layernorm.weight",
    }
    out = {}
    for name, shard in local.items():
        layer, module, kind = name.rsplit(".", 2)
        i = layer.split(".")[1]
        slime_name = f"module.module.decoder.layers.{i}.{_SLIME_NAMES[module + '.' + kind]}"
        for hf_name, tensor in convert(args, slime_name, gather(slime_name, shard)):
            suffix = hf_name.split(f"model.layers.{i}.", 1)[1]
            out[f"layers.{i}.{back[suffix]}"] = tensor
    return out


def reshard_matches_dense(rank: int, world: int, s, ffn: int) -> dict[str, Any]:
    """On one of ``world`` gloo ranks: build this rank's Megatron shards of the dense weights,
    reshard them with :func:`~atlas.labkit.post_training.weights.reshard_to_hf` and with slime's
    code at the pin, and compare both with the dense weights, bit for bit."""
    from atlas.labkit.post_training.weights import reshard_to_hf

    dense = dense_hf_weights(s, ffn)
    local = megatron_tp_shards(dense, s, world, rank)
    ours = reshard_to_hf(local, s)
    theirs = slime_reshard(local, s)
    return {
        "local_elements": sum(t.numel() for t in local.values()),
        "dense_elements": sum(t.numel() for t in dense.values()),
        "ours_equal": ours.keys() == dense.keys()
        and all(torch.equal(ours[k], dense[k]) for k in dense),
        "slime_equal": theirs.keys() == dense.keys()
        and all(torch.equal(theirs[k], dense[k]) for k in dense),
    }


def model_tensors(m, dtype_bytes: int = 2) -> list[tuple[str, int]]:
    """The tensors of a registry model as a checkpoint lists them: name and bytes, in order
    (embedding, then per layer its attention, norms and MLP or experts, then the head)."""
    a, h = m.attention, m.hidden
    q, kv = a.q_heads * a.head_dim, a.kv_heads * a.head_dim
    out = [("embed_tokens", m.vocab * h)]
    for i in range(m.layers):
        p = f"layers.{i}."
        out += [
            (p + "q_proj", h * q),
            (p + "k_proj", h * kv),
            (p + "v_proj", h * kv),
            (p + "o_proj", q * h),
        ]
        out += [(p + "input_layernorm", h), (p + "post_attention_layernorm", h)]
        if a.qk_norm:
            out += [(p + "q_norm", a.head_dim), (p + "k_norm", a.head_dim)]
        if m.mlp.is_moe and i >= m.mlp.dense_layers:
            out.append((p + "router", m.mlp.experts * h))
            for e in range(m.mlp.experts):
                f = m.mlp.expert_intermediate
                out += [
                    (p + f"experts.{e}.gate", h * f),
                    (p + f"experts.{e}.up", h * f),
                    (p + f"experts.{e}.down", f * h),
                ]
        else:
            f = m.mlp.intermediate
            out += [(p + "gate_proj", h * f), (p + "up_proj", h * f), (p + "down_proj", f * h)]
    out.append(("norm", h))
    if not m.tied_embeddings:
        out.append(("lm_head", m.vocab * h))
    return [(name, n * dtype_bytes) for name, n in out]


class _H2DBucket:
    """Stand-in for checkpoint-engine's pydantic ``H2DBucket`` (same three fields)."""

    def __init__(self, size: int, ranges: list, items: list) -> None:
        self.size, self.ranges, self.items = size, ranges, items


def checkpoint_engine_buckets(
    tensors: list[tuple[str, int]], world: int, bucket_bytes: int
) -> list[tuple[int, list[str], int]]:
    """checkpoint-engine's ``_gen_h2d_buckets`` at the pin, for a checkpoint whose tensors are
    split over ``world`` owner ranks as its ``examples/update.py`` splits them (contiguous runs
    of ``ceil(n / world)`` tensors). Returns ``(owner, tensor names, bucket bytes)`` per bucket
    of the broadcast plan (``ranks=None``: every rank receives every bucket)."""
    from typing import NamedTuple

    align = upstream_defs(
        "checkpoint-engine",
        "checkpoint_engine/pin_memory.py",
        ("_align_size",),
        {"_ALIGN_SIZE": 256},
    )
    types_ = upstream_defs(
        "checkpoint-engine",
        "checkpoint_engine/data_types.py",
        ("BucketRange",),
        {"NamedTuple": NamedTuple},
    )
    ps = upstream_defs(
        "checkpoint-engine",
        "checkpoint_engine/ps.py",
        ("_gen_h2d_buckets",),
        {
            "H2DBucket": _H2DBucket,
            "BucketRange": types_["BucketRange"],
            "MemoryBufferMetaList": Any,
            "logger": _QUIET,
        },
    )
    per = (len(tensors) + world - 1) // world
    metas = {}
    for rank in range(world):
        mine = tensors[rank * per : (rank + 1) * per]
        if not mine:
            continue
        items = [
            types.SimpleNamespace(
                name=n, aligned_size=align["_align_size"](torch.uint8, torch.Size([b]))
            )
            for n, b in mine
        ]
        metas[rank] = types.SimpleNamespace(
            memory_buffer_metas_list=[types.SimpleNamespace(metas=items)]
        )
    plan = ps["_gen_h2d_buckets"](metas, bucket_bytes, {}, {}, None)
    return [(owner, [it.name for it in bucket.items], bucket.size) for owner, _, bucket in plan]


def engine_layers_match_dense(rank: int, world: int, s, ffn: int) -> dict[str, bool]:
    """The whole path on ``world`` gloo ranks: Megatron TP shards of the dense weights,
    resharded to Hugging Face tensors by :func:`~.weights.reshard_to_hf`, then loaded into
    nano-vllm's own tensor-parallel layers (``nanovllm/layers/linear.py`` at the pin, run on
    this process group) through their ``weight_loader``s. Each layer's output on this rank
    must equal the matching slice of the dense layer's output (the row-parallel layers
    all-reduce, so theirs must equal the whole)."""
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn

    from atlas.labkit.post_training.weights import reshard_to_hf

    nv = upstream_defs(
        "nano-vllm",
        "nanovllm/layers/linear.py",
        (
            "divide",
            "LinearBase",
            "ColumnParallelLinear",
            "MergedColumnParallelLinear",
            "QKVParallelLinear",
            "RowParallelLinear",
        ),
        {"torch": torch, "nn": nn, "F": F, "dist": dist},
    )
    dense = dense_hf_weights(s, ffn)
    hf = reshard_to_hf(megatron_tp_shards(dense, s, world, rank), s)
    qkv = nv["QKVParallelLinear"](s.hidden, s.head_dim, s.heads, s.groups)
    o = nv["RowParallelLinear"](s.heads * s.head_dim, s.hidden)
    gate_up = nv["MergedColumnParallelLinear"](s.hidden, [ffn, ffn])
    down = nv["RowParallelLinear"](ffn, s.hidden)
    p = "layers.0."
    for shard, layer in (("q", qkv), ("k", qkv), ("v", qkv)):
        layer.weight.weight_loader(layer.weight, hf[p + f"{shard}_proj.weight"], shard)
    gate_up.weight.weight_loader(gate_up.weight, hf[p + "gate_proj.weight"], 0)
    gate_up.weight.weight_loader(gate_up.weight, hf[p + "up_proj.weight"], 1)
    o.weight.weight_loader(o.weight, hf[p + "o_proj.weight"])
    down.weight.weight_loader(down.weight, hf[p + "down_proj.weight"])

    g = torch.Generator().manual_seed(1)
    x = torch.randn(5, s.hidden, generator=g)
    q_cols, kv_cols = s.heads * s.head_dim // world, s.groups * s.head_dim // world
    mine = lambda w, n: w[rank * n : (rank + 1) * n]  # noqa: E731 - this rank's rows
    want_qkv = torch.cat(
        [
            x @ mine(dense[p + f"{n}_proj.weight"], c).T
            for n, c in (("q", q_cols), ("k", kv_cols), ("v", kv_cols))
        ],
        -1,
    )
    want_gate_up = torch.cat(
        [x @ mine(dense[p + f"{n}_proj.weight"], ffn // world).T for n in ("gate", "up")], -1
    )
    a = torch.randn(5, s.heads * s.head_dim, generator=g)
    h = torch.randn(5, ffn, generator=g)
    a_mine = a[:, rank * q_cols : (rank + 1) * q_cols]
    h_mine = h[:, rank * ffn // world : (rank + 1) * ffn // world]
    with torch.no_grad():
        return {
            "qkv": torch.allclose(qkv(x), want_qkv, atol=1e-5),
            "gate_up": torch.allclose(gate_up(x), want_gate_up, atol=1e-5),
            "o": torch.allclose(o(a_mine), a @ dense[p + "o_proj.weight"].T, atol=1e-5),
            "down": torch.allclose(down(h_mine), h @ dense[p + "down_proj.weight"].T, atol=1e-5),
        }
