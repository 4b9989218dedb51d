"""Model configurations and the KV-cache ledger: what one token, one block and one GPU hold.

The serving chapter sizes everything from these numbers, so each configuration names the file
it was read from. Parameter counts are derived from the shapes, not copied from model cards.
"""

from __future__ import annotations

from dataclasses import dataclass

from atlas.labkit.registry.models import model as registry_model
from atlas.labkit.units import GIB, MIB  # one GIB for the whole book

ROLE = "taught"


@dataclass(frozen=True)
class ModelConfig:
    """The shape of a decoder-only transformer with grouped-query attention."""

    name: str
    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tie_embeddings: bool
    dtype_bytes: int
    source: str

    def kv_bytes_per_token(self, tp_size: int = 1) -> int:
        """Bytes of K and V one token adds to the cache of one tensor-parallel rank."""
        if self.num_kv_heads % tp_size:
            raise ValueError(f"{self.num_kv_heads} KV heads do not split over {tp_size} ranks")
        kv_heads = self.num_kv_heads // tp_size
        return 2 * self.num_layers * kv_heads * self.head_dim * self.dtype_bytes

    def num_params(self) -> int:
        """Weights counted from the shapes (SwiGLU MLP, RMSNorm, optional q/k norms ignored)."""
        q = self.hidden_size * self.num_heads * self.head_dim
        kv = 2 * self.hidden_size * self.num_kv_heads * self.head_dim
        o = self.num_heads * self.head_dim * self.hidden_size
        mlp = 3 * self.hidden_size * self.intermediate_size
        norms = 2 * self.hidden_size
        per_layer = q + kv + o + mlp + norms
        embed = self.vocab_size * self.hidden_size
        head = 0 if self.tie_embeddings else embed
        return self.num_layers * per_layer + embed + head + self.hidden_size

    def layer_matmul_params(self) -> int:
        """Weights that multiply every token in the layers: Q, K, V, O and the three MLP
        matrices of each layer (norms and the embedding lookup do no matrix multiply)."""
        q = self.hidden_size * self.num_heads * self.head_dim
        kv = 2 * self.hidden_size * self.num_kv_heads * self.head_dim
        o = self.num_heads * self.head_dim * self.hidden_size
        mlp = 3 * self.hidden_size * self.intermediate_size
        return self.num_layers * (q + kv + o + mlp)

    def weight_bytes(self) -> int:
        return self.num_params() * self.dtype_bytes

    def attention_flops_per_key(self) -> int:
        """FLOPs one query token spends on one cached key: QK^T and PV over all heads."""
        return 4 * self.num_layers * self.num_heads * self.head_dim


def from_registry(name: str, label: str, dtype_bytes: int = 2) -> ModelConfig:
    """A ``ModelConfig`` with the shapes of the book's model registry entry ``name``
    (``atlas.labkit.registry.models``, where every figure names its source)."""
    m = registry_model(name)
    a = m.attention
    return ModelConfig(
        name=label,
        num_layers=m.layers,
        hidden_size=m.hidden,
        num_heads=a.q_heads,
        num_kv_heads=a.kv_heads,
        head_dim=a.head_dim,
        intermediate_size=m.mlp.intermediate,
        vocab_size=m.vocab,
        tie_embeddings=m.tied_embeddings,
        dtype_bytes=dtype_bytes,
        source=f"atlas.labkit.registry.models: {name}",
    )


# Qwen3-0.6B, the model nano-vllm's README uses.
QWEN3_0_6B = from_registry("qwen3-0.6b", "Qwen3-0.6B")

# Llama 3 8B; Llama 3.1 8B has the same shapes (Table 3 of the Llama 3 paper).
LLAMA_3_8B = from_registry("llama-3.1-8b", "Llama-3-8B")


@dataclass(frozen=True)
class KVLedger:
    """How a GPU's memory divides into weights, activations and KV-cache blocks."""

    model: str
    gpu_bytes: int
    utilization: float
    weight_bytes: int
    activation_peak_bytes: int
    bytes_per_token: int
    block_size: int
    bytes_per_block: int
    num_blocks: int

    @property
    def cache_tokens(self) -> int:
        return self.num_blocks * self.block_size

    @property
    def cache_bytes(self) -> int:
        return self.num_blocks * self.bytes_per_block

    def max_sequences(self, context_len: int) -> int:
        """Sequences of ``context_len`` tokens that fit at once (whole blocks each)."""
        blocks_per_seq = -(-context_len // self.block_size)
        return self.num_blocks // blocks_per_seq

    def table(self) -> str:
        rows = [
            ("GPU memory x utilization", self.gpu_bytes * self.utilization / GIB, "GiB"),
            ("weights", self.weight_bytes / GIB, "GiB"),
            ("activation peak", self.activation_peak_bytes / GIB, "GiB"),
            ("KV cache", self.cache_bytes / GIB, "GiB"),
            ("KV bytes per token", self.bytes_per_token / 1024, "KiB"),
            ("KV bytes per block", self.bytes_per_block / MIB, "MiB"),
        ]
        lines = [f"{label:<26}{value:>10.2f} {unit}" for label, value, unit in rows]
        lines.append(f"{'blocks':<26}{self.num_blocks:>10d}")
        lines.append(f"{'tokens in cache':<26}{self.cache_tokens:>10d}")
        return "\n".join(lines)


def kv_ledger(
    model: ModelConfig,
    gpu_bytes: int,
    *,
    utilization: float = 0.9,
    block_size: int = 256,
    activation_peak_bytes: int = 0,
    tp_size: int = 1,
) -> KVLedger:
    """Size the KV cache the way nano-vllm's ``ModelRunner.allocate_kv_cache`` does.

    The budget is ``gpu_bytes * utilization`` minus what the weights (split over ``tp_size``
    ranks) and the warm-up's activation peak occupy; the rest is cut into whole blocks.
    """
    if not 0 < utilization <= 1:
        raise ValueError(f"utilization must be in (0, 1], got {utilization}")
    per_token = model.kv_bytes_per_token(tp_size)
    per_block = per_token * block_size
    weights = model.weight_bytes() // tp_size
    budget = int(gpu_bytes * utilization) - weights - activation_peak_bytes
    num_blocks = max(budget, 0) // per_block
    return KVLedger(
        model=model.name,
        gpu_bytes=gpu_bytes,
        utilization=utilization,
        weight_bytes=weights,
        activation_peak_bytes=activation_peak_bytes,
        bytes_per_token=per_token,
        block_size=block_size,
        bytes_per_block=per_block,
        num_blocks=num_blocks,
    )
