"""The registry's figures of the hybrid models beyond Qwen3-Next: MiniMax-Text-01 and
MiniMax-M1 (lightning attention), Kimi Linear (Kimi Delta Attention with MLA) and Jamba
(Mamba with attention), each with its source.

The configuration files are the checkpoints' own ``config.json`` on Hugging Face, read at the
revision named in each source, and, where the vendor's own GitHub repository holds one at a
commit, that file or class (MiniMax-M1's ``config.json``, AI21's ``JambaConfig``); their
layer-type fields (``attn_type_list``,
``linear_attn_config``, ``attn_layer_period``/``attn_layer_offset``) are re-read independently
by :mod:`atlas.labkit.checks.models.hybrid`, which rebuilds each layer list from them.
"""

from __future__ import annotations

from atlas.labkit.registry.schema import (
    MLP,
    Attention,
    LinearAttention,
    Model,
    Reported,
    Source,
    _pattern,
)

ROLE = "support"

FAMILY: list[Model] = []  # in the order of the frontier table

MINIMAX_CONFIG = (
    "https://huggingface.co/MiniMaxAI/MiniMax-Text-01/blob/"
    "372fb1d2051619593bfc3b7ef553745615bbbd5d/config.json"
)
MINIMAX_CARD = (
    "https://github.com/MiniMax-AI/MiniMax-01/blob/"
    "3c6375c22a892bb04b1fd341bd6bcb7463fcb6fc/MiniMax-Text-01-Model-Card.md"
)
MINIMAX_M1_CONFIG = (
    "https://github.com/MiniMax-AI/MiniMax-M1/blob/"
    "2abb4f45a9df4154b4bde024d51874bd127edcee/config.json"
)
MINIMAX_M1_REPORT = (
    "https://github.com/MiniMax-AI/MiniMax-M1/blob/"
    "2abb4f45a9df4154b4bde024d51874bd127edcee/MiniMax_M1_tech_report.pdf"
)
KIMI_LINEAR_REPORT = (
    "https://github.com/MoonshotAI/Kimi-Linear/blob/"
    "858dba5ee09b7bf8a4830150528fa6ab0728e441/tech_report.pdf"
)
JAMBA_AI21_CONFIG_CLASS = (
    "https://github.com/AI21Labs/transformers/blob/"
    "0f93de12be2f2158e29b5988ae5ad1c65b302502/src/transformers/models/jamba/configuration_jamba.py"
)
KIMI_LINEAR_CONFIG = (
    "https://huggingface.co/moonshotai/Kimi-Linear-48B-A3B-Instruct/blob/main/config.json"
)
JAMBA_CONFIG = "https://huggingface.co/ai21labs/Jamba-v0.1/blob/main/config.json"
FLA_KDA = "https://github.com/fla-org/flash-linear-attention/blob/bc3b101dcb713ddc5bd8924b66754eb68b5ccf89/fla/layers/kda.py"


def _add(m: Model) -> Model:
    FAMILY.append(m)
    return m


# --- MiniMax-Text-01 and MiniMax-M1: seven lightning layers, then one softmax layer ------------


def _minimax(name: str, context: int, reported_ref: str, reported_where: str) -> Model:
    """MiniMax-M1 is MiniMax-Text-01's architecture continued in training; the figures are
    the same, the context the one each release states."""
    return Model(
        name=name,
        family="MiniMax",
        layers=80,
        hidden=6144,
        vocab=200064,
        attention=Attention(
            kind="hybrid",
            q_heads=64,
            kv_heads=8,
            head_dim=128,
            layer_types=_pattern(80, 8, 7, "full", "linear"),
        ),
        linear=LinearAttention(
            kind="lightning",
            key_heads=64,
            value_heads=64,
            key_head_dim=128,
            value_head_dim=128,
            conv_kernel=0,
        ),
        mlp=MLP(experts=32, top_k=2, expert_intermediate=9216),
        tied_embeddings=False,
        context=context,
        position="RoPE on half of each head (base 10,000,000) in the softmax layers",
        reported=Reported(
            total="456B",
            active="45.9B",
            ref=reported_ref,
            where=reported_where,
            active_excludes="both",
        ),
        sources=(
            Source(
                MINIMAX_CONFIG,
                "config.json: num_hidden_layers 80, hidden_size 6144, num_attention_heads 64, "
                "head_dim 128, intermediate_size 9216, num_experts_per_tok 2, attn_type_list "
                "(0 = lightning, 1 = softmax) seven 0s then a 1, ten times. num_key_value_heads "
                "lies past the part of this file read here: see MiniMax-M1's config.json below",
                ("layers", "hidden", "attention", "mlp", "linear"),
            ),
            Source(
                MINIMAX_M1_CONFIG,
                "MiniMax's own repository, MiniMax-M1's config.json: num_key_value_heads 8, "
                "and the figures above again (num_hidden_layers 80, hidden_size 6144, "
                "num_attention_heads 64, head_dim 128, intermediate_size 9216, "
                "num_local_experts 32, num_experts_per_tok 2, the same attn_type_list, "
                "vocab_size 200064, tie_word_embeddings false, rope_theta 10000000, rotary_dim "
                "64). M1 continues the pretraining of MiniMax-Text-01 (M1 report, section 1, "
                "in the same repository: " + MINIMAX_M1_REPORT + "), so the two share it",
                ("attention",),
            ),
            Source(
                MINIMAX_CARD,
                "Model Architecture: 456B total, 45.9B activated, 80 layers, a softmax "
                "attention after every 7 lightning attention, 64 heads of 128, 32 experts of "
                "hidden dimension 9216 with top-2 routing, RoPE on half the head dimension "
                "with base 10,000,000, hidden size 6144, vocabulary 200,064",
                ("vocab", "tied_embeddings", "position"),
            ),
            Source(reported_ref, reported_where, ("context",)),
        ),
        notes="The lightning layers' output gate and norm are counted as in the Hugging Face "
        "MiniMax model; DeepNorm-style residual scales are scalars and not counted.",
    )


_add(
    _minimax(
        "minimax-text-01",
        1048576,
        "cite:minimax2025minimax01",
        "abstract: 456B total, 45.9B activated per token; trained at up to 1M tokens of "
        "context (4M at inference)",
    )
)
_add(
    _minimax(
        "minimax-m1",
        1048576,
        "cite:minimax2025minimaxm1",
        "abstract: built on MiniMax-Text-01, 456B total, 45.9B activated per token; native "
        "context of 1M tokens",
    )
)

# --- Kimi Linear: three KDA layers, then one MLA layer --------------------------------------

_KIMI_FULL = (4, 8, 12, 16, 20, 24, 27)  # config.json's full_attn_layers, 1-based

_add(
    Model(
        name="kimi-linear-48b-a3b",
        family="Kimi Linear",
        layers=27,
        hidden=2304,
        vocab=163840,
        attention=Attention(
            kind="MLA",
            q_heads=32,
            kv_heads=32,
            head_dim=192,
            layer_types=tuple("full" if i + 1 in _KIMI_FULL else "linear" for i in range(27)),
            kv_lora_rank=512,
            qk_nope_dim=128,
            qk_rope_dim=64,
            v_head_dim=128,
        ),
        linear=LinearAttention(
            kind="KDA",
            key_heads=32,
            value_heads=32,
            key_head_dim=128,
            value_head_dim=128,
            conv_kernel=4,
        ),
        mlp=MLP(
            intermediate=9216,
            experts=256,
            top_k=8,
            expert_intermediate=1024,
            shared_experts=1,
            shared_intermediate=1024,
            dense_layers=1,
        ),
        tied_embeddings=False,
        context=1048576,
        position="none (NoPE: mla_use_nope; the KDA recurrence carries position)",
        reported=Reported(
            total="48B",
            active="3B",
            ref="cite:kimiteam2025kimilinear",
            where="abstract: 48B total, 3B activated",
            active_excludes="both",
        ),
        sources=(
            Source(
                KIMI_LINEAR_CONFIG,
                "config.json: num_hidden_layers 27, hidden_size 2304, 32 heads, "
                "kv_lora_rank 512, q_lora_rank null, qk_nope_head_dim 128, qk_rope_head_dim "
                "64, v_head_dim 128, mla_use_nope true; linear_attn_config: full_attn_layers "
                "[4, 8, ..., 24, 27], kda_layers the other 20, 32 heads of 128, "
                "short_conv_kernel_size 4; 256 experts, 8 per token, width 1024, one shared "
                "expert, first_k_dense_replace 1 (intermediate 9216); vocab 163840; "
                "model_max_length 1048576 (read at main, not at a pinned revision)",
                (
                    "layers",
                    "hidden",
                    "vocab",
                    "attention",
                    "mlp",
                    "tied_embeddings",
                    "context",
                    "position",
                ),
            ),
            Source(
                KIMI_LINEAR_REPORT,
                "Moonshot's own repository, the Kimi Linear report (sections 4 and 5.4): KDA "
                "and full MLA layers in a uniform 3:1 ratio, NoPE in every MLA layer, key and "
                "value head dimensions 128, 256 experts, the first layer dense, 48B total and "
                "3B active; the repository holds no config.json, so the figures above are "
                "the checkpoint's",
                ("position",),
            ),
            Source(
                FLA_KDA,
                "KimiDeltaAttention: q, k, v projections with a short convolution each, "
                "low-rank decay gate f_proj and output gate g_proj, b_proj, A_log, dt_bias, "
                "o_norm, o_proj (the parameter count of a KDA layer)",
                ("linear",),
            ),
        ),
        notes="The MLA layers keep the rope slice of the latent in their cache although "
        "no rotary embedding is applied to it.",
    )
)

# --- Jamba: seven Mamba layers to one attention layer, MoE every other layer ------------------

_add(
    Model(
        name="jamba-v0.1",
        family="Jamba",
        layers=32,
        hidden=4096,
        vocab=65536,
        attention=Attention(
            kind="hybrid",
            q_heads=32,
            kv_heads=8,
            head_dim=128,
            layer_types=_pattern(32, 8, 4, "full", "linear"),
        ),
        linear=LinearAttention(
            kind="Mamba",
            key_heads=0,
            value_heads=0,
            key_head_dim=0,
            value_head_dim=0,
            conv_kernel=4,
            inner=8192,
            state_dim=16,
            dt_rank=256,
        ),
        mlp=MLP(
            intermediate=14336,
            experts=16,
            top_k=2,
            expert_intermediate=14336,
            moe_period=2,
            moe_offset=1,
        ),
        tied_embeddings=False,
        context=262144,
        position="none (the Mamba layers carry position)",
        reported=Reported(
            total="52B",
            active="12B",
            ref="https://huggingface.co/ai21labs/Jamba-v0.1",
            where="model card: 12B active parameters, 52B in total across all experts",
        ),
        sources=(
            Source(
                JAMBA_CONFIG,
                "config.json: num_hidden_layers 32, hidden_size 4096, 32 heads / 8 kv heads, "
                "attn_layer_period 8, attn_layer_offset 4, expert_layer_period 2, "
                "expert_layer_offset 1, 16 experts, 2 per token, intermediate_size 14336, "
                "mamba_expand 2, mamba_d_state 16, mamba_d_conv 4, mamba_dt_rank 256, "
                "vocab 65536, max_position_embeddings 262144 (read at main, not at a pinned "
                "revision; an earlier revision of the file wrote n_ctx 262144 and "
                "mamba_inner_layernorms true instead, and the one at main has no "
                "mamba_inner_layernorms field: the three small norms of each Mamba layer are "
                "counted as that earlier revision declared them)",
                (
                    "layers",
                    "hidden",
                    "vocab",
                    "attention",
                    "mlp",
                    "linear",
                    "tied_embeddings",
                    "context",
                    "position",
                ),
            ),
            Source(
                JAMBA_AI21_CONFIG_CLASS,
                "AI21's own fork of Transformers, JambaConfig: its defaults, documented as "
                "yielding a configuration similar to the jamba-small architecture (the link "
                "is ai21labs/Jamba-v0.1), are the figures above "
                "(vocab 65536, hidden 4096, intermediate 14336, 32 layers, 32 heads / 8 kv "
                "heads, 16 experts, 2 per token, expert period 2 offset 1, attention period 8 "
                "offset 4, mamba d_state 16, d_conv 4, expand 2, dt_rank ceil(4096 / 16) = "
                "256, n_ctx 262144, mamba_inner_layernorms true)",
                ("linear",),
            ),
        ),
    )
)
