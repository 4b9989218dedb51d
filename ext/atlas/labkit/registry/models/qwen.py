"""The registry's figures of Qwen3 dense, MoE and Next, each with its source."""

from __future__ import annotations

from atlas.labkit.registry.schema import (
    MLP,
    SLIME,
    TRANSFORMERS,
    Attention,
    LinearAttention,
    Model,
    Reported,
    Source,
    _every,
)

ROLE = "support"

FAMILY: list[Model] = []  # in the order of the frontier table


def _add(m: Model) -> Model:
    FAMILY.append(m)
    return m


# --- Qwen3 dense, MoE and Next ----------------------------------------------------------------

for _name, _layers, _hidden, _ffn, _heads, _total in (
    ("qwen3-8b", 36, 4096, 12288, 32, "8B"),
    ("qwen3-32b", 64, 5120, 25600, 64, "32B"),
):
    _add(
        Model(
            name=_name,
            family="Qwen3",
            layers=_layers,
            hidden=_hidden,
            vocab=151936,
            attention=Attention(kind="GQA", q_heads=_heads, kv_heads=8, head_dim=128, qk_norm=True),
            mlp=MLP(intermediate=_ffn),
            tied_embeddings=False,
            context=131072,
            position="RoPE (base 1,000,000; YaRN from 32k to 128k)",
            reported=Reported(
                total=_total, active=_total, ref="cite:yang2025qwen3", where="Table 1"
            ),
            sources=(
                Source(
                    f"{SLIME}/scripts/models/{_name.replace('b', 'B')}.sh",
                    "Megatron arguments: layers, hidden, FFN, heads, query groups, kv-channels, "
                    "vocabulary, QK layernorm, untied head",
                    ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings"),
                ),
                Source(
                    "cite:yang2025qwen3",
                    "Table 1 (context 128K) and Section 2 (RoPE base, YaRN)",
                    ("context", "position"),
                ),
            ),
        )
    )

_add(
    Model(
        name="qwen3-0.6b",
        family="Qwen3",
        layers=28,
        hidden=1024,
        vocab=151936,
        attention=Attention(kind="GQA", q_heads=16, kv_heads=8, head_dim=128, qk_norm=True),
        mlp=MLP(intermediate=3072),
        tied_embeddings=True,
        context=32768,
        position="RoPE (base 1,000,000)",
        reported=Reported(
            total="0.6B",
            active="0.6B",
            ref="cite:yang2025qwen3",
            where="Table 1 (the model's name)",
        ),
        sources=(
            Source(
                f"{SLIME}/scripts/models/qwen3-0.6B.sh",
                "Megatron arguments: 28 layers, hidden 1024, FFN 3072, 16 heads / 8 query "
                "groups, kv-channels 128, QK layernorm, vocabulary 151936, no untie flag "
                "(embeddings tied)",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings", "position"),
            ),
            Source("cite:yang2025qwen3", "Table 1 (context 32K for the 0.6B model)", ("context",)),
        ),
        notes="The model nano-vllm's examples run; the serving chapter sizes its cache.",
    )
)

_add(
    Model(
        name="qwen3-235b-a22b",
        family="Qwen3",
        layers=94,
        hidden=4096,
        vocab=151936,
        attention=Attention(kind="GQA", q_heads=64, kv_heads=4, head_dim=128, qk_norm=True),
        mlp=MLP(experts=128, top_k=8, expert_intermediate=1536),
        tied_embeddings=False,
        context=131072,
        position="RoPE (base 1,000,000; YaRN from 32k to 128k)",
        reported=Reported(total="235B", active="22B", ref="cite:yang2025qwen3", where="Table 2"),
        sources=(
            Source(
                f"{SLIME}/scripts/models/qwen3-235B-A22B.sh",
                "Megatron arguments: 94 layers, hidden 4096, 64 heads / 4 query groups, "
                "kv-channels 128, 128 experts top-8 of width 1536, every layer MoE",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings"),
            ),
            Source("cite:yang2025qwen3", "Table 2 (context 128K)", ("context", "position")),
        ),
    )
)

_add(
    Model(
        name="qwen3-next-80b-a3b",
        family="Qwen3-Next",
        layers=48,
        hidden=2048,
        vocab=151936,
        attention=Attention(
            kind="hybrid",
            q_heads=16,
            kv_heads=2,
            head_dim=256,
            layer_types=_every(48, 4, "full", "linear"),
            qk_norm=True,
            output_gate=True,
        ),
        linear=LinearAttention(
            kind="Gated DeltaNet",
            key_heads=16,
            value_heads=32,
            key_head_dim=128,
            value_head_dim=128,
            conv_kernel=4,
        ),
        mlp=MLP(
            experts=512,
            top_k=10,
            expert_intermediate=512,
            shared_experts=1,
            shared_intermediate=512,
            shared_gate=True,
        ),
        tied_embeddings=False,
        context=262144,
        position="partial RoPE (a quarter of each head, base 10,000,000) in the full layers",
        mtp_layers=1,
        reported=Reported(
            total="80B",
            active="3B",
            ref="cite:qwen2025qwen3next",
            where="model card: 80B total, 3B activated",
            total_excludes="",
            active_excludes="both",
        ),
        sources=(
            Source(
                f"{SLIME}/scripts/models/qwen3-next-80B-A3B.sh",
                "Megatron arguments: 48 layers, hidden 2048, 16 heads / 2 query groups, "
                "kv-channels 256, gated attention, 512 experts top-10 of width 512, a shared "
                "expert of width 512 with a gate, rotary percent 0.25, base 1e7",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings", "position"),
            ),
            Source(
                f"{TRANSFORMERS}/src/transformers/models/qwen3_next/configuration_qwen3_next.py",
                "Qwen3NextConfig, whose defaults are the Qwen3-Next-80B-A3B-Instruct checkpoint: "
                "linear_num_key_heads 16, linear_num_value_heads 32, key/value head dim 128, "
                "conv kernel 4; every fourth layer full attention ((i + 1) % 4 == 0)",
                ("linear",),
            ),
            Source(
                "cite:qwen2025qwen3next",
                "80B total, 3B activated; hybrid layout 3 Gated DeltaNet : 1 gated attention; "
                "native context 262,144 tokens",
                ("context",),
            ),
        ),
    )
)
