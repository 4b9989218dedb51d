"""What attention costs: FLOPs, bytes, the score matrix, and the KV cache per token.

One attention layer with ``H`` query heads of width ``d`` (values ``d_v``) over ``M`` queries
and ``N`` keys computes ``S = QK^T`` (``2 M N d`` FLOPs a head) and ``O = PV`` (``2 M N d_v``).
Under a causal mask only the pairs a query may see count.
"""

from __future__ import annotations

ROLE = "taught"


def causal_pairs(m: int, n: int) -> int:
    """Query-key pairs a bottom-right causal mask keeps: row ``i`` sees ``i + n - m + 1`` keys."""
    return sum(max(0, min(n, i + n - m + 1)) for i in range(m))


def attention_flops(m, n, heads, d, dv=None, causal=False):
    """Matmul FLOPs of one layer's attention (the softmax's few FLOPs per score not counted)."""
    dv = d if dv is None else dv
    pairs = causal_pairs(m, n) if causal else m * n
    return 2 * heads * pairs * (d + dv)


def attention_min_bytes(m, n, heads, kv_heads, d, dv, elem_bytes):
    """The bytes attention cannot avoid moving: read Q, K, V once and write O once."""
    return elem_bytes * (m * heads * d + n * kv_heads * (d + dv) + m * heads * dv)


def score_matrix_bytes(m, n, heads, elem_bytes):
    """The ``[M, N]`` scores of every head, were they materialised."""
    return heads * m * n * elem_bytes


def cache_elements_per_token(kind, kv_heads=0, head_dim=0, d_c=0, d_r=0):
    """Cached elements per token and layer.

    MHA, GQA and MQA keep a key and a value per KV head (``kv_heads`` is the query-head count,
    a divisor of it, or 1). MLA keeps one latent of ``d_c`` and one rotary key of ``d_r``.
    """
    if kind == "MLA":
        return d_c + d_r
    if kind in ("MHA", "GQA", "MQA"):
        return 2 * kv_heads * head_dim
    raise ValueError(f"unknown attention kind {kind!r}")


def kv_cache_bytes(kind, layers, tokens, elem_bytes, **shape):
    """Cache bytes of one sequence: every layer, every token."""
    return layers * tokens * cache_elements_per_token(kind, **shape) * elem_bytes
