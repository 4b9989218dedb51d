"""The registry's figures of GLM-4.5 and gpt-oss, each with its source."""

from __future__ import annotations

from atlas.labkit.registry.schema import (
    GPT_OSS,
    MLP,
    SLIME,
    Attention,
    Model,
    Reported,
    Source,
    _alternating,
)

ROLE = "support"

FAMILY: list[Model] = []  # in the order of the frontier table


def _add(m: Model) -> Model:
    FAMILY.append(m)
    return m


# --- GLM-4.5 ----------------------------------------------------------------------------------

_add(
    Model(
        name="glm-4.5",
        family="GLM-4.5",
        layers=92,
        hidden=5120,
        vocab=151552,
        attention=Attention(
            kind="GQA", q_heads=96, kv_heads=8, head_dim=128, qkv_bias=True, qk_norm=True
        ),
        mlp=MLP(
            intermediate=12288,
            experts=160,
            top_k=8,
            expert_intermediate=1536,
            shared_experts=1,
            shared_intermediate=1536,
            dense_layers=3,
            router_bias=True,
        ),
        tied_embeddings=False,
        context=131072,
        position="partial RoPE (half of each head, base 1,000,000)",
        mtp_layers=1,
        reported=Reported(
            total="355B",
            active="32B",
            ref="cite:zeng2025glm45",
            where="Table 1: 355B total, 32B activated (the report does not say whether the "
            "embedding tables are counted; the count without them matches)",
            active_excludes="both",
        ),
        sources=(
            Source(
                f"{SLIME}/scripts/models/glm4.5-355B-A32B.sh",
                "Megatron arguments: 3 dense + 89 MoE layers, hidden 5120, FFN 12288, 96 heads "
                "/ 8 query groups, kv-channels 128, QKV bias, QK layernorm, rotary percent 0.5, "
                "160 experts top-8 of width 1536, 1 shared, vocabulary 151552",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings", "position"),
            ),
            Source("cite:zeng2025glm45", "Section 2 (context 128K)", ("context",)),
        ),
    )
)

# --- gpt-oss ----------------------------------------------------------------------------------

_add(
    Model(
        name="gpt-oss-120b",
        family="gpt-oss",
        layers=36,
        hidden=2880,
        vocab=201088,
        attention=Attention(
            kind="GQA",
            q_heads=64,
            kv_heads=8,
            head_dim=64,
            layer_types=_alternating(36, "sliding", "full"),
            window=128,
            qkv_bias=True,
            o_bias=True,
            sinks=True,
        ),
        mlp=MLP(experts=128, top_k=4, expert_intermediate=2880, expert_bias=True, router_bias=True),
        tied_embeddings=False,
        context=131072,
        position="RoPE (base 150,000) with YaRN x32 from 4,096",
        reported=Reported(
            total="116.83B",
            active="5.13B",
            ref="cite:openai2025gptoss",
            where="Table 1: 116.83B total, 5.13B active (embedding lookup left out)",
            active_excludes="input",
        ),
        sources=(
            Source(
                f"{GPT_OSS}/gpt_oss/torch/model.py",
                "ModelConfig defaults (the 120b shape) and AttentionBlock: sliding window on "
                "even layers, sinks, biases; MLPBlock: gate/up/down with biases, router bias",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings", "position"),
            ),
            Source("cite:openai2025gptoss", "Section 2: 131,072-token context", ("context",)),
        ),
    )
)
