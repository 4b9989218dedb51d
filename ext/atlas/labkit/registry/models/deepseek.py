"""The registry's figures of DeepSeek-V3 (R1 shares the architecture) and Kimi K2, each with its
source.
"""

from __future__ import annotations

from atlas.labkit.registry.schema import DEEPSEEK_V3, MLP, SLIME, Attention, Model, Reported, Source

ROLE = "support"

FAMILY: list[Model] = []  # in the order of the frontier table


def _add(m: Model) -> Model:
    FAMILY.append(m)
    return m


# --- DeepSeek-V3 (R1 shares the architecture) and Kimi K2 (MLA + fine-grained MoE) -----------

_add(
    Model(
        name="deepseek-v3",
        family="DeepSeek-V3 / R1",
        layers=61,
        hidden=7168,
        vocab=129280,
        attention=Attention(
            kind="MLA",
            q_heads=128,
            kv_heads=128,
            head_dim=192,
            q_lora_rank=1536,
            kv_lora_rank=512,
            qk_nope_dim=128,
            qk_rope_dim=64,
            v_head_dim=128,
        ),
        mlp=MLP(
            intermediate=18432,
            experts=256,
            top_k=8,
            expert_intermediate=2048,
            shared_experts=1,
            shared_intermediate=2048,
            dense_layers=3,
            router_bias=True,
        ),
        tied_embeddings=False,
        context=131072,
        position="decoupled RoPE on a 64-dim key shared by all heads (YaRN to 128k)",
        mtp_layers=1,
        reported=Reported(
            total="671B",
            active="37B",
            ref="cite:deepseekai2024deepseekv3",
            where="Section 1 and Table 1: 671B total, 37B activated (MTP module excluded)",
        ),
        sources=(
            Source(
                f"{DEEPSEEK_V3}/inference/configs/config_671B.json",
                "the released inference configuration",
                ("layers", "hidden", "vocab", "attention", "mlp"),
            ),
            Source(
                f"{SLIME}/scripts/models/deepseek-v3.sh",
                "Megatron arguments: untied output head, RoPE with YaRN scaling factor 40",
                ("tied_embeddings", "position"),
            ),
            Source(
                f"{DEEPSEEK_V3}/README.md",
                "model summary table: context length 128K; 671B main model plus 14B MTP module",
                ("context",),
            ),
        ),
    )
)

_add(
    Model(
        name="kimi-k2",
        family="Kimi K2",
        layers=61,
        hidden=7168,
        vocab=163840,
        attention=Attention(
            kind="MLA",
            q_heads=64,
            kv_heads=64,
            head_dim=192,
            q_lora_rank=1536,
            kv_lora_rank=512,
            qk_nope_dim=128,
            qk_rope_dim=64,
            v_head_dim=128,
        ),
        mlp=MLP(
            intermediate=18432,
            experts=384,
            top_k=8,
            expert_intermediate=2048,
            shared_experts=1,
            shared_intermediate=2048,
            dense_layers=1,
            router_bias=True,
        ),
        tied_embeddings=False,
        context=131072,
        position="decoupled RoPE as in DeepSeek-V3 (base 50,000, YaRN factor 32)",
        reported=Reported(
            total="1.04T",
            active="32B",
            ref="cite:kimiteam2025kimi",
            where="abstract: 1.04T total, 32B activated",
        ),
        sources=(
            Source(
                f"{SLIME}/scripts/models/kimi-k2.sh",
                "Megatron arguments: 61 layers (1 dense), hidden 7168, 64 heads, MLA ranks, "
                "384 experts top-8 of width 2048, 1 shared, vocabulary 163840, RoPE base 50000",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings", "position"),
            ),
            Source("cite:kimiteam2025kimi", "Section 4 (context 128k)", ("context",)),
        ),
    )
)
