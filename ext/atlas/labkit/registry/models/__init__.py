"""The registry of model configurations: ``MODELS``, ``model(name)`` and the models outside the
frontier table (``OTHER_MODELS``).

Each family's figures are in a module of their own; this package puts them in the frontier
table's order. The figures' shape is :mod:`atlas.labkit.registry.schema`; what follows from a
shape (parameters, FLOPs, KV bytes) is the models chapter's taught code,
:mod:`atlas.labkit.models.counting`.
"""

from __future__ import annotations

from atlas.labkit.registry.models import (
    deepseek,
    gemma,
    glm_gpt_oss,
    hybrid,
    llama,
    qwen,
    qwen_vl,
)
from atlas.labkit.registry.schema import MLP, Attention, Model, Reported, Source

ROLE = "support"

MODELS: dict[str, Model] = {
    m.name: m
    for family in (llama, qwen, deepseek, glm_gpt_oss, gemma, qwen_vl, hybrid)
    for m in family.FAMILY
}


def model(name: str) -> Model:
    """The registered model called ``name`` (see ``MODELS`` for the names)."""
    try:
        return MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None


# --- added for training ---
# Models the training chapter needs that are not frontier open models, kept out of MODELS so
# that the frontier table and its checks are unchanged. PaLM 540B: the run whose model FLOPs
# utilisation (MFU) the training chapter recomputes from its reported throughput.
OTHER_MODELS: dict[str, Model] = {
    "palm-540b": Model(
        name="palm-540b",
        family="PaLM",
        layers=118,
        hidden=18432,
        vocab=256000,
        attention=Attention(kind="MQA", q_heads=48, kv_heads=1, head_dim=256),
        mlp=MLP(intermediate=4 * 18432),
        tied_embeddings=True,
        context=2048,
        position="RoPE",
        norms_per_layer=1,
        reported=Reported(
            total="540.35B", active="540.35B", ref="cite:chowdhery2022palm", where="Table 1"
        ),
        sources=(
            Source(
                "cite:chowdhery2022palm",
                "Table 1 (540B: 118 layers, 48 heads, d_model 18432, 540.35B parameters); "
                "Section 2: SwiGLU with d_ff = 4 d_model, parallel layers (one LayerNorm a "
                "layer), multi-query attention with head size 256, RoPE, shared input-output "
                "embeddings, a 256k SentencePiece vocabulary; Section 5: sequence length 2048",
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
        ),
        notes="Parallel attention and MLP branches share one LayerNorm; no biases.",
    ),
}


def other_model(name: str) -> Model:
    """A model of :data:`OTHER_MODELS` (outside the frontier table)."""
    try:
        return OTHER_MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(OTHER_MODELS)}") from None
