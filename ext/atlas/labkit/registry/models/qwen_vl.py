"""The registry's figures of Qwen2.5-VL, each with its source."""

from __future__ import annotations

from atlas.labkit.registry.schema import MLP, QWEN25_VL, Attention, Model, Source, Vision

ROLE = "support"

FAMILY: list[Model] = []  # in the order of the frontier table


def _add(m: Model) -> Model:
    FAMILY.append(m)
    return m


# --- Qwen2.5-VL (a vision-language model: ViT with window attention, MLP merger) -----------

_add(
    Model(
        name="qwen2.5-vl-7b",
        family="Qwen2.5-VL",
        layers=28,
        hidden=3584,
        vocab=151646,
        attention=Attention(kind="GQA", q_heads=28, kv_heads=4, head_dim=128, qkv_bias=True),
        mlp=MLP(intermediate=18944),
        tied_embeddings=False,
        context=32768,
        position="MRoPE: rotary sections for time, height and width (absolute time)",
        vision=Vision(
            name="Qwen2.5-VL ViT (window attention; full attention in blocks 7, 15, 23, 31)",
            layers=32,
            width=1280,
            heads=16,
            mlp=3456,
            patch=14,
            merge=2,
            temporal_patch=2,
            gated_mlp=True,
            learned_positions=False,
            norm="rmsnorm",
            connector="mlp",
        ),
        sources=(
            Source(
                "cite:bai2025qwen25vl",
                "Table 1 (7B column): ViT hidden 1280, 32 layers, 16 heads, intermediate 3456, "
                "patch 14, window 112, full-attention blocks {7, 15, 23, 31}; merger 1280 -> "
                "3584; LLM hidden 3584, 28 layers, 4 KV heads of 128, intermediate 18944, "
                "untied embeddings, vocabulary 151646; Section 2.1: RMSNorm and SwiGLU in the "
                "ViT, 2 x 2 patches merged by a two-layer MLP, MRoPE",
                (
                    "layers",
                    "hidden",
                    "vocab",
                    "attention",
                    "mlp",
                    "tied_embeddings",
                    "position",
                    "vision",
                ),
            ),
            Source(
                f"{QWEN25_VL}/README.md",
                "the released config.json is set for contexts up to 32,768 tokens",
                ("context",),
            ),
        ),
        notes="Query heads are hidden / head size (3584 / 128 = 28); the report's table gives "
        "KV heads and head size. QKV biases as in Qwen2.5.",
    )
)
