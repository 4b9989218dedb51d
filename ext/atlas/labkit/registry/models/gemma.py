"""The registry's figures of Gemma 3, each with its source."""

from __future__ import annotations

from atlas.labkit.registry.schema import (
    GEMMA,
    GPT_OSS,
    MLP,
    Attention,
    Model,
    Reported,
    Source,
    Vision,
    _alternating,
    _every,
)

ROLE = "support"

FAMILY: list[Model] = []  # in the order of the frontier table


def _add(m: Model) -> Model:
    FAMILY.append(m)
    return m


# --- Gemma 3 (sliding-window GQA, vision encoder) ---------------------------------------------

_add(
    Model(
        name="gemma-3-27b",
        family="Gemma 3",
        layers=62,
        hidden=5376,
        vocab=262144,
        attention=Attention(
            kind="GQA",
            q_heads=32,
            kv_heads=16,
            head_dim=128,
            layer_types=_every(62, 6, "full", "sliding"),
            window=1024,
            qk_norm=True,
        ),
        mlp=MLP(intermediate=21504),
        tied_embeddings=True,
        context=131072,
        position="RoPE: base 10,000 in local layers, 1,000,000 (scaled x8) in global layers",
        norms_per_layer=4,
        vision=Vision(
            name="SigLIP",
            layers=27,
            width=1152,
            heads=16,
            mlp=4304,
            patch=14,
            image=896,
            tokens=256,
        ),
        reported=Reported(
            total="27B",
            active="27B",
            ref="cite:gemmateam2025gemma",
            where="Table 1: vision encoder 417M, embedding 1,416M, non-embedding 25,600M",
        ),
        sources=(
            Source(
                f"{GEMMA}/gemma/gm/nn/_gemma.py",
                "Gemma3_27B: num_embed, embed_dim, hidden_dim, heads, head_dim, KV heads, "
                "post-attention/FFW norms, QK norm, attention pattern 5 local : 1 global over "
                "62 layers, sliding window 1024, RoPE bases",
                ("layers", "hidden", "vocab", "attention", "mlp", "position"),
            ),
            Source(
                f"{GEMMA}/gemma/gm/nn/vision/_vision_utils.py",
                "ViTModel defaults (patch 14, width 1152, depth 27, MLP 4304, 16 heads) and, in "
                "_vision.py, SigLiPFromPatches (896 x 896 images pooled to 256 tokens)",
                ("vision",),
            ),
            Source(
                "cite:gemmateam2025gemma",
                "Section 2: 128K context, tied embeddings (shared with the output layer)",
                ("context", "tied_embeddings"),
            ),
        ),
    )
)


_add(
    Model(
        name="gpt-oss-20b",
        family="gpt-oss",
        layers=24,
        hidden=2880,
        vocab=201088,
        attention=Attention(
            kind="GQA",
            q_heads=64,
            kv_heads=8,
            head_dim=64,
            layer_types=_alternating(24, "sliding", "full"),
            window=128,
            qkv_bias=True,
            o_bias=True,
            sinks=True,
        ),
        mlp=MLP(experts=32, top_k=4, expert_intermediate=2880, expert_bias=True, router_bias=True),
        tied_embeddings=False,
        context=131072,
        position="RoPE (base 150,000) with YaRN x32 from 4,096",
        reported=Reported(
            total="20.91B",
            active="3.61B",
            ref="cite:openai2025gptoss",
            where="Table 1: 20.91B total, 3.61B active (embedding lookup left out)",
            active_excludes="input",
        ),
        sources=(
            Source(
                "cite:openai2025gptoss",
                "Section 2: 24 layers and 32 experts per MoE block for gpt-oss-20b, the rest "
                "as gpt-oss-120b; 131,072-token context",
                ("layers", "mlp", "context"),
            ),
            Source(
                f"{GPT_OSS}/gpt_oss/torch/model.py",
                "ModelConfig and the blocks: hidden 2880, 64 query / 8 KV heads of 64, sliding "
                "window 128 on even layers, sinks, biases, vocabulary 201088, untied head",
                ("hidden", "vocab", "attention", "tied_embeddings", "position"),
            ),
        ),
    )
)
