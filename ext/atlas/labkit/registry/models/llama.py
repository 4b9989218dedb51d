"""The registry's figures of Llama 2, Llama 3.1 and Mixtral, each with its source."""

from __future__ import annotations

from atlas.labkit.registry.schema import MLP, SLIME, Attention, Model, Reported, Source

ROLE = "support"

FAMILY: list[Model] = []  # in the order of the frontier table


def _add(m: Model) -> Model:
    FAMILY.append(m)
    return m


# --- Llama 2 and 3.1 (dense, GQA except Llama 2 7B) -------------------------------------------

_add(
    Model(
        name="llama-2-7b",
        family="Llama 2",
        layers=32,
        hidden=4096,
        vocab=32000,
        attention=Attention(kind="MHA", q_heads=32, kv_heads=32, head_dim=128),
        mlp=MLP(intermediate=11008),
        tied_embeddings=False,
        context=4096,
        position="RoPE (base 10,000)",
        reported=Reported(
            total="7B", active="7B", ref="cite:touvron2023llama", where="Table 1 (7B)"
        ),
        sources=(
            Source(
                "cite:touvron2023llama",
                "Section 2.2 and Table 1: same architecture as Llama 1, 4k context, 32k vocabulary",
                ("vocab", "context", "tied_embeddings"),
            ),
            Source(
                "https://github.com/meta-llama/llama/blob/"
                "689c7f261b9c5514636ecc3c5fefefcbb3e6eed7/llama/model.py",
                "ModelArgs defaults (the 7B shape: dim 4096, 32 layers, 32 heads, multiple_of "
                "256); FeedForward: int(2 * 4 * 4096 / 3) rounded up to a multiple of 256 is "
                "11008; rotary base 10000",
                ("layers", "hidden", "attention", "mlp", "position"),
            ),
        ),
    )
)

_LLAMA3_REPORT = "cite:grattafiori2024llama"
_LLAMA3_TABLE = "Table 3: layers, model and FFN dimension, heads, KV heads, RoPE base 500,000"
_LLAMA31_8B_CONFIG = Source(
    f"{SLIME}/scripts/models/llama3.1-8B-Instruct.sh",
    "Megatron arguments of Llama 3.1 8B: vocabulary 128256, 131072 positions, untied head",
    ("vocab", "context", "tied_embeddings"),
)

for _name, _layers, _hidden, _ffn, _heads, _total in (
    ("llama-3.1-8b", 32, 4096, 14336, 32, "8B"),
    ("llama-3.1-70b", 80, 8192, 28672, 64, "70B"),
    ("llama-3.1-405b", 126, 16384, 53248, 128, "405B"),
):
    _add(
        Model(
            name=_name,
            family="Llama 3.1",
            layers=_layers,
            hidden=_hidden,
            vocab=128256,
            attention=Attention(kind="GQA", q_heads=_heads, kv_heads=8, head_dim=128),
            mlp=MLP(intermediate=_ffn),
            tied_embeddings=False,
            context=131072,
            position="RoPE (base 500,000, Llama 3 frequency scaling to 128k)",
            reported=Reported(total=_total, active=_total, ref=_LLAMA3_REPORT, where="Table 3"),
            sources=(
                Source(
                    _LLAMA3_REPORT,
                    _LLAMA3_TABLE,
                    ("layers", "hidden", "attention", "mlp", "position"),
                ),
                _LLAMA31_8B_CONFIG,
            ),
            notes="The three sizes share one tokenizer and the 128k context (report, Section 3).",
        )
    )

# --- Mixtral ----------------------------------------------------------------------------------

_add(
    Model(
        name="mixtral-8x7b",
        family="Mixtral",
        layers=32,
        hidden=4096,
        vocab=32000,
        attention=Attention(kind="GQA", q_heads=32, kv_heads=8, head_dim=128),
        mlp=MLP(experts=8, top_k=2, expert_intermediate=14336),
        tied_embeddings=False,
        context=32768,
        position="RoPE",
        reported=Reported(
            total="47B",
            active="13B",
            ref="cite:jiang2024mixtral",
            where="Section 2.1: 47B parameters, 13B active per token",
        ),
        sources=(
            Source(
                "cite:jiang2024mixtral",
                "Table 1: dim 4096, 32 layers, head_dim 128, hidden_dim 14336, 32 heads, 8 KV "
                "heads, context 32768, vocab 32000, 8 experts, top-2",
                (
                    "layers",
                    "hidden",
                    "vocab",
                    "attention",
                    "mlp",
                    "context",
                    "position",
                    "tied_embeddings",
                ),
            ),
        ),
    )
)
