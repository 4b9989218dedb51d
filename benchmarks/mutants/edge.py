"""Mutations of the edge chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "q4-0-positive-scale",
        "edge",
        "edge/quants.py",
        "    d = m / np.float32(-8)\n",
        "    d = m / np.float32(8)\n",
        ("edge/gguf",),
        "Q4_0's scale loses its sign, so the largest weight no longer lands on the code -8",
    ),
    Mutation(
        "q4-0-nibbles-swapped",
        "edge",
        "edge/quants.py",
        "    packed = q[:, : n // 2] | (q[:, n // 2 :] << 4)\n",
        "    packed = q[:, n // 2 :] | (q[:, : n // 2] << 4)\n",
        ("edge/gguf",),
        "weights 0-15 go to the high nibbles and 16-31 to the low ones",
    ),
    Mutation(
        "q8-0-divides-by-128",
        "edge",
        "edge/quants.py",
        "    d = np.abs(b).max(axis=1) / np.float32(127)\n",
        "    d = np.abs(b).max(axis=1) / np.float32(128)\n",
        ("edge/gguf",),
        "Q8_0's scale uses 128 steps, as if the int8 range were symmetric to -128",
    ),
    Mutation(
        "k4-scales-minimums-swapped",
        "edge",
        "edge/quants.py",
        "    out[:, 8:12] = (sc[:, 4:8] & 0x0F) | ((mn[:, 4:8] & 0x0F) << 4)\n",
        "    out[:, 8:12] = (mn[:, 4:8] & 0x0F) | ((sc[:, 4:8] & 0x0F) << 4)\n",
        ("edge/gguf",),
        "the low bits of scales 4-7 and minimums 4-7 trade nibbles in bytes 8-11",
    ),
    Mutation(
        "q4-k-one-super-scale",
        "edge",
        "edge/blocks.py",
        '        BlockFormat("Q4_K", QK_K, 2 * FP16_BYTES + K_SCALE_SIZE + QK_K // 2),\n',
        '        BlockFormat("Q4_K", QK_K, FP16_BYTES + K_SCALE_SIZE + QK_K // 2),\n',
        ("edge/index", "edge/gguf"),
        "Q4_K counted with one FP16 super-scale instead of d and dmin",
    ),
    Mutation(
        "kv-cache-keys-only",
        "edge",
        "edge/bounds.py",
        "    return 2 * layers * kv_heads * head_dim * tokens * elem_bytes\n",
        "    return layers * kv_heads * head_dim * tokens * elem_bytes\n",
        ("edge/bounds", "edge/runtimes"),
        "the KV cache counts keys but not values",
    ),
    Mutation(
        "gguf-align-always-pads",
        "edge",
        "edge/gguf.py",
        "    return offset + (alignment - offset % alignment) % alignment\n",
        "    return offset + (alignment - offset % alignment)\n",
        ("edge/gguf",),
        "an offset that is already aligned is padded by a whole alignment",
    ),
    Mutation(
        "static-cache-mask-strict",
        "edge",
        "edge/cache.py",
        "    mask = slots[None, :] <= pos[:, None]  # a query sees its own and earlier positions\n",
        "    mask = slots[None, :] < pos[:, None]  # a query sees its own and earlier positions\n",
        ("edge/runtimes",),
        "the query at position t cannot see its own key",
    ),
]
