"""Checks of the labs of ``models/index.md``.

The chapter's checks: the registry against the outside world.
"""

from __future__ import annotations

from atlas.labkit.models.counting import (
    kv_bytes,
    kv_bytes_per_token,
    layer_types,
    params_active,
    params_total,
    vision_params,
)
from atlas.labkit.pinned import read
from atlas.labkit.registry.models import MODELS
from atlas.labkit.registry.schema import Model
from atlas.labkit.words import N_, Phrase, phrase

ROLE = "check"


GIB = 2**30


def _attention_label(m: Model) -> Phrase | str:
    """The attention column: its kind and shape (the words are a phrase the Chinese edition
    translates; the figures are data)."""
    a = m.attention
    kinds = layer_types(m)
    if a.kind == "MLA" and "linear" in kinds:  # Kimi Linear: MLA in the full layers
        base = f"MLA {a.q_heads}h {a.kv_lora_rank}+{a.qk_rope_dim}"
        template = N_("hybrid {full}/{layers} full, {base}")
        return phrase(template, full=kinds.count("full"), layers=len(kinds), base=base)
    if a.kind == "MLA":
        template = N_("MLA {heads}h, latent {rank}+{rope}")
        return phrase(template, heads=a.q_heads, rank=a.kv_lora_rank, rope=a.qk_rope_dim)
    base = f"{a.q_heads}q/{a.kv_heads}kv x{a.head_dim}"
    if "linear" not in kinds:
        base = f"{a.kind} {base}"
    if "linear" in kinds:
        n_full = kinds.count("full")
        template = N_("hybrid {full}/{layers} full, {base}")
        return phrase(template, full=n_full, layers=len(kinds), base=base)
    if "sliding" in kinds:
        n_full = kinds.count("full")
        template = N_("{base}, {full}/{layers} full, w={window}")
        return phrase(template, base=base, full=n_full, layers=len(kinds), window=a.window)
    return base


def _mlp_label(m: Model) -> Phrase | str:
    mlp = m.mlp
    if not mlp.is_moe:
        return phrase(N_("dense {width}"), width=mlp.intermediate)
    shared = f"+{mlp.shared_experts}" if mlp.shared_experts else ""
    return f"{mlp.top_k}{shared}/{mlp.experts} x{mlp.expert_intermediate}"


def frontier_rows() -> list[dict]:
    rows = []
    for m in MODELS.values():
        rows.append(
            {
                "model": m.name,
                "attention": _attention_label(m),
                "mlp": _mlp_label(m),
                "context_k": m.context // 1024,
                "total_b": params_total(m) / 1e9,
                "active_b": params_active(m) / 1e9,
                "kv_kib": kv_bytes_per_token(m, "bf16") / 1024,
                "kv32k_gib": kv_bytes(m, 32768, "bf16") / GIB,
                "kv128k_gib": kv_bytes(m, 131072, "bf16") / GIB,
                "vision_m": vision_params(m.vision, m.hidden) / 1e6,
            }
        )
    return rows


SLIME_SCRIPTS = {
    "llama-3.1-8b": "scripts/models/llama3.1-8B-Instruct.sh",
    "qwen3-0.6b": "scripts/models/qwen3-0.6B.sh",
    "qwen3-8b": "scripts/models/qwen3-8B.sh",
    "qwen3-32b": "scripts/models/qwen3-32B.sh",
    "qwen3-235b-a22b": "scripts/models/qwen3-235B-A22B.sh",
    "qwen3-next-80b-a3b": "scripts/models/qwen3-next-80B-A3B.sh",
    "deepseek-v3": "scripts/models/deepseek-v3.sh",
    "kimi-k2": "scripts/models/kimi-k2.sh",
    "glm-4.5": "scripts/models/glm4.5-355B-A32B.sh",
}


def slime_arguments(path: str) -> dict[str, str]:
    """``--flag value`` pairs of a slime model script read at the pin (flags without a value
    map to ``""``); shell variables for the layer count are resolved."""
    import re

    text, _ = read("slime", path)
    variables = {}
    for name, value in re.findall(r"^(\w+)=(\S+)", text, re.M):
        default = re.search(r":-(\d+)\}", value)
        variables[name] = int(default.group(1)) if default else value.strip('"')
    args: dict[str, str] = {}
    tokens = [t for line in text.splitlines() for t in line.split("#")[0].split()]
    for i, token in enumerate(tokens):
        if token.startswith("--"):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            args[token[2:]] = "" if nxt.startswith("--") or nxt == ")" else nxt.strip('"')
    layers = args.get("num-layers", "")
    if layers.startswith("$(("):
        expression = re.search(r"--num-layers\s+\$\(\((.*?)\)\)", text).group(1)
        names = re.findall(r"[A-Z_]+", expression)
        args["num-layers"] = str(sum(int(variables[n]) for n in names))
    elif layers.startswith("$"):
        args["num-layers"] = str(variables[layers.strip("${}")])
    for name in ("FIRST_K_DENSE_REPLACE", "N_DENSE_LAYERS"):
        if name in variables:
            args["dense-layers"] = str(variables[name])
    return args


def registry_vs_slime(name: str) -> dict[str, tuple]:
    """Fields where the registry and slime's script disagree: ``{flag: (registry, slime)}``."""
    m = MODELS[name]
    a, mlp = m.attention, m.mlp
    args = slime_arguments(SLIME_SCRIPTS[name])
    expect = {
        "num-layers": m.layers,
        "hidden-size": m.hidden,
        "num-attention-heads": a.q_heads,
        "vocab-size": m.vocab,
    }
    if a.kind == "MLA":
        expect.update(
            {
                "q-lora-rank": a.q_lora_rank,
                "kv-lora-rank": a.kv_lora_rank,
                "qk-head-dim": a.qk_nope_dim,
                "qk-pos-emb-head-dim": a.qk_rope_dim,
                "v-head-dim": a.v_head_dim,
            }
        )
    else:
        expect.update({"num-query-groups": a.kv_heads, "kv-channels": a.head_dim})
    if not mlp.is_moe or mlp.dense_layers:
        expect["ffn-hidden-size"] = mlp.intermediate
    if mlp.is_moe:
        expect.update(
            {
                "num-experts": mlp.experts,
                "moe-router-topk": mlp.top_k,
                "moe-ffn-hidden-size": mlp.expert_intermediate,
                "dense-layers": mlp.dense_layers,
            }
        )
        if mlp.shared_experts:
            expect["moe-shared-expert-intermediate-size"] = mlp.shared_intermediate
    untied = "untie-embeddings-and-output-weights" in args
    out = {k: (v, args.get(k)) for k, v in expect.items() if str(v) != args.get(k)}
    if untied == m.tied_embeddings:
        out["tied"] = (m.tied_embeddings, not untied)
    return out
