"""What a small device can hold and how fast it can decode at batch 1.

Decoding one token at batch 1 reads every weight once and the whole KV cache once, and does
about two FLOPs per weight read: far too few to keep a phone's or laptop's arithmetic busy. Its
time is therefore bounded below by bytes over bandwidth, and tokens per second above by the
inverse. These functions keep that arithmetic in one place; the edge chapter's pages use them
with the figures of the SoC and model registries.
"""

from __future__ import annotations

from atlas.labkit.edge.blocks import BlockFormat

ROLE = "taught"


def weight_bytes(params: int, fmt: BlockFormat) -> float:
    """Bytes of ``params`` weights stored in ``fmt`` (scales included)."""
    return params * fmt.bytes_per_weight


def kv_cache_bytes(
    layers: int, kv_heads: int, head_dim: int, tokens: int, elem_bytes: float
) -> float:
    """Bytes of a KV cache: a key and a value vector per layer, KV head and token."""
    return 2 * layers * kv_heads * head_dim * tokens * elem_bytes


def decode_tokens_per_s(bandwidth: float, bytes_per_token: float) -> float:
    """The batch-1 decode bound: a step reads ``bytes_per_token`` at ``bandwidth`` at best."""
    return bandwidth / bytes_per_token


def fits(capacity: float, reserved: float, *parts: float) -> bool:
    """Whether the parts (weights, cache, buffers) fit in what the OS leaves of ``capacity``."""
    return sum(parts) <= capacity - reserved
