"""Checks of the hybrid models on ``models/index.md``: the savings table and its independent
count.

The registry builds each hybrid's layer list with a period and an offset
(:func:`atlas.labkit.registry.schema._pattern`) and the counting code sizes the cache from it
(:mod:`atlas.labkit.models.counting`). The independent route here starts from each
checkpoint's own encoding of its layout, as its ``config.json`` writes it (an
``attn_type_list`` of 0s and 1s, 1-based lists of KDA and full layers, a period and an offset,
an interval), rebuilds the layer list from that, counts the softmax layers and multiplies by
the bytes one softmax layer caches per token, written out from the same file's head counts.
"""

from __future__ import annotations

import dataclasses

from atlas.labkit.models.counting import kv_bytes, kv_bytes_per_token, layer_types, state_bytes
from atlas.labkit.registry.models import MODELS
from atlas.labkit.registry.schema import Model

ROLE = "check"

GIB = 2**30
MIB = 2**20
HYBRIDS = (
    "qwen3-next-80b-a3b",
    "minimax-text-01",
    "minimax-m1",
    "kimi-linear-48b-a3b",
    "jamba-v0.1",
)

# Each checkpoint's layout fields as its config.json writes them (the source of each is named
# in the registry entry), and the head figures of one softmax layer's cache.
CONFIG_LAYOUT: dict[str, dict] = {
    "qwen3-next-80b-a3b": {
        "num_hidden_layers": 48,
        "full_attention_interval": 4,
        "num_key_value_heads": 2,
        "head_dim": 256,
    },
    "minimax-text-01": {
        "attn_type_list": [0, 0, 0, 0, 0, 0, 0, 1] * 10,
        "num_key_value_heads": 8,
        "head_dim": 128,
    },
    "minimax-m1": {
        "attn_type_list": [0, 0, 0, 0, 0, 0, 0, 1] * 10,
        "num_key_value_heads": 8,
        "head_dim": 128,
    },
    "kimi-linear-48b-a3b": {
        "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],
        "full_attn_layers": [4, 8, 12, 16, 20, 24, 27],
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
    },
    "jamba-v0.1": {
        "num_hidden_layers": 32,
        "attn_layer_period": 8,
        "attn_layer_offset": 4,
        "num_key_value_heads": 8,
        "head_dim": 128,
    },
}


def layers_from_config(name: str) -> list[str]:
    """The layer list rebuilt from the config's own layout field: ``"full"`` or ``"linear"``."""
    c = CONFIG_LAYOUT[name]
    if "attn_type_list" in c:
        return ["full" if t == 1 else "linear" for t in c["attn_type_list"]]
    if "full_attn_layers" in c:
        n = len(c["full_attn_layers"]) + len(c["kda_layers"])
        if sorted(c["full_attn_layers"] + c["kda_layers"]) != list(range(1, n + 1)):
            raise ValueError(f"{name}: KDA and full layers do not tile 1..{n}")
        return ["full" if i in c["full_attn_layers"] else "linear" for i in range(1, n + 1)]
    if "full_attention_interval" in c:
        k = c["full_attention_interval"]
        return ["full" if (i + 1) % k == 0 else "linear" for i in range(c["num_hidden_layers"])]
    period, offset = c["attn_layer_period"], c["attn_layer_offset"]
    return ["full" if i % period == offset else "linear" for i in range(c["num_hidden_layers"])]


def softmax_layer_bytes(name: str) -> int:
    """BF16 bytes one softmax layer caches per token, from the config's head figures: a key
    and a value per KV head, or MLA's latent and its rope slice."""
    c = CONFIG_LAYOUT[name]
    if "kv_lora_rank" in c:
        return 2 * (c["kv_lora_rank"] + c["qk_rope_head_dim"])
    return 2 * 2 * c["num_key_value_heads"] * c["head_dim"]


def config_vs_registry(name: str) -> dict[str, object]:
    """What differs between the config's count and the registry's: empty when they agree."""
    m = MODELS[name]
    layers = layers_from_config(name)
    out: dict[str, object] = {}
    registry = list(layer_types(m))
    if registry != layers:
        if len(registry) != len(layers):
            out["layers"] = (len(registry), len(layers))
        else:
            pairs = zip(registry, layers, strict=True)
            out["layer_types"] = [i for i, (a, b) in enumerate(pairs) if a != b]
    independent = layers.count("full") * softmax_layer_bytes(name)
    if kv_bytes_per_token(m) != independent:
        out["kv_per_token"] = (kv_bytes_per_token(m), independent)
    return out


def all_full(m: Model) -> Model:
    """The same model with every layer a softmax layer: the full-attention model of the same
    width that a hybrid's savings are measured against."""
    attention = dataclasses.replace(m.attention, layer_types=())
    return dataclasses.replace(m, attention=attention, linear=None)


def ratio(m: Model) -> str:
    """Linear layers to full layers, as the reports print it (``"3:1"``)."""
    kinds = layer_types(m)
    linear, full = kinds.count("linear"), kinds.count("full")
    return f"{linear // full}:1" if linear % full == 0 else f"{linear}:{full}"


def hybrid_rows() -> list[dict]:
    """One row per hybrid: its linear kind and ratio, the cache per token and at 2**20 tokens
    against the all-full model of the same width, and the fixed state per sequence (FP32)."""
    rows = []
    for name in HYBRIDS:
        m = MODELS[name]
        full = all_full(m)
        tokens = 2**20
        rows.append(
            {
                "model": name,
                "linear": m.linear.kind,
                "ratio": ratio(m),
                "kv_kib": kv_bytes_per_token(m) / 1024,
                "full_kib": kv_bytes_per_token(full) / 1024,
                "kv1m_gib": kv_bytes(m, tokens) / GIB,
                "full1m_gib": kv_bytes(full, tokens) / GIB,
                "saved": 1 - kv_bytes(m, tokens) / kv_bytes(full, tokens),
                "state_mib": state_bytes(m, "fp32") / MIB,
            }
        )
    return rows
