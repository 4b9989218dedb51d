"""The memory ledger of a training step and the rank groups of a device mesh.

The ledger counts bytes per parameter for mixed-precision training with Adam (half-precision
weights and gradients, fp32 master weights and two fp32 moments) and how ZeRO stages divide
each term by the data-parallel degree. Activation memory follows Korthikanti et al. (2022).
The mesh lays ranks out with the first named dimension varying fastest, as Megatron-LM's
``RankGenerator`` does, and lists the groups of ranks that differ only in chosen dimensions.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from atlas.labkit.registry.models import model as registry_model
from atlas.labkit.units import GIB  # one GIB for the whole book

ROLE = "taught"

# Bytes per parameter of mixed-precision Adam: bf16 weights and gradients; fp32 master copy,
# first and second moments.
MIXED_ADAM = {"weights": 2, "gradients": 2, "master": 4, "adam_m": 4, "adam_v": 4}


@dataclass(frozen=True)
class TransformerShape:
    """The shape of a decoder-only transformer with gated (SwiGLU) MLPs and RMSNorm."""

    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    tied_embeddings: bool = False

    def layer_matmul_params(self) -> int:
        """Weights of one layer that multiply every token: Q, K, V, O and the MLP's three."""
        h, kv = self.hidden, self.hidden * self.kv_heads // self.heads
        return 2 * h * h + 2 * h * kv + 3 * h * self.ffn

    def params(self) -> int:
        """Parameters: per layer attention (Q, O full; K, V scaled by the KV heads), three
        MLP matrices and two norm vectors; embeddings, output head unless tied, final norm."""
        h, kv = self.hidden, self.hidden * self.kv_heads // self.heads
        attention = 2 * h * h + 2 * h * kv
        mlp = 3 * h * self.ffn
        per_layer = attention + mlp + 2 * h
        head = 0 if self.tied_embeddings else self.vocab * h
        return self.layers * per_layer + self.vocab * h + head + h


def from_registry(name: str) -> TransformerShape:
    """The shape of the book's model registry entry ``name`` (every figure there is cited)."""
    m = registry_model(name)
    return TransformerShape(
        layers=m.layers,
        hidden=m.hidden,
        ffn=m.mlp.intermediate,
        heads=m.attention.q_heads,
        kv_heads=m.attention.kv_heads,
        vocab=m.vocab,
        tied_embeddings=m.tied_embeddings,
    )


# Llama 2 7B (Touvron et al., 2023), from the model registry.
LLAMA2_7B = from_registry("llama-2-7b")

# Llama 3.1 8B (Grattafiori et al., 2024), from the model registry: its 128,256-token
# vocabulary makes the output head weigh about as much as two and a half layers.
LLAMA31_8B = from_registry("llama-3.1-8b")


def ledger(n_params: int, dp: int = 1, zero_stage: int = 0) -> dict[str, float]:
    """GiB per device for weights, gradients and optimizer state under a ZeRO stage.

    Stage 1 shards the master copy and moments over ``dp`` ranks, stage 2 the gradients as
    well, stage 3 the weights too. Activations are not included: they depend on the batch.
    """
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage}")
    sharded = {
        "weights": zero_stage >= 3,
        "gradients": zero_stage >= 2,
        "master": zero_stage >= 1,
        "adam_m": zero_stage >= 1,
        "adam_v": zero_stage >= 1,
    }
    out = {
        name: n_params * nbytes / (dp if sharded[name] else 1) / GIB
        for name, nbytes in MIXED_ADAM.items()
    }
    out["total"] = sum(out.values())
    return out


def activation_bytes_per_layer(
    seq: int, batch: int, hidden: int, heads: int, tp: int = 1, sp: bool = False
) -> float:
    """Activation bytes one transformer layer keeps for backward (16-bit activations, no
    recomputation), from Korthikanti et al.: ``s b h (34 + 5 a s / h)`` on one device;
    tensor parallelism divides all but ``10 s b h`` by ``t``; sequence parallelism the rest."""
    sbh, attn = seq * batch * hidden, 5 * heads * seq / hidden
    if tp == 1:
        return sbh * (34 + attn)
    if sp:
        return sbh * (34 + attn) / tp
    return sbh * (10 + 24 / tp + attn / tp)


def rank_groups(sizes: dict[str, int], dims: str) -> list[list[int]]:
    """Groups of global ranks that differ only along ``dims`` (for example ``"dp"`` or
    ``"tp-pp"``), for a mesh whose first named dimension varies fastest.

    ``rank = sum_i index_i * stride_i`` with ``stride_i`` the product of the sizes before
    dimension ``i``. A group fixes every other index and runs over the chosen ones.
    """
    names = list(sizes)
    chosen = dims.split("-")
    for name in chosen:
        if name not in sizes:
            raise ValueError(f"unknown dimension {name!r}; the mesh has {'-'.join(names)}")
    strides, acc = {}, 1
    for name in names:
        strides[name] = acc
        acc *= sizes[name]
    others = [n for n in names if n not in chosen]
    inner = [n for n in names if n in chosen]

    def ranges(group: list[str]) -> itertools.product:
        # itertools.product varies its last factor fastest; list dimensions slowest first
        return itertools.product(*(range(sizes[n]) for n in reversed(group)))

    groups = []
    for fixed in ranges(others):
        base = sum(i * strides[n] for n, i in zip(reversed(others), fixed, strict=True))
        groups.append(
            [
                base + sum(i * strides[n] for n, i in zip(reversed(inner), idx, strict=True))
                for idx in ranges(inner)
            ]
        )
    return groups
