"""Mutations of the models chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "dsv3-kv-lora-typo",
        "models",
        "registry/models/deepseek.py",
        "            q_heads=128,\n            kv_heads=128,\n            head_dim=192,\n"
        "            q_lora_rank=1536,\n            kv_lora_rank=512,",
        "            q_heads=128,\n            kv_heads=128,\n            head_dim=192,\n"
        "            q_lora_rank=1536,\n            kv_lora_rank=576,",
        ("models/index",),
        "a figure typo in DeepSeek-V3's configuration (kv_lora_rank 576 instead of 512)",
    ),
    Mutation(
        "mla-cache-no-rope-key",
        "models",
        "models/counting.py",
        "        per_layer = (a.kv_lora_rank + a.qk_rope_dim) * nbytes",
        "        per_layer = a.kv_lora_rank * nbytes",
        ("models/counting",),
        "the MLA cache forgets the shared rope key",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "mlp-params-two-matrices",
        "models",
        "models/counting.py",
        "        return 3 * m.hidden * mlp.intermediate",
        "        return 2 * m.hidden * mlp.intermediate",
        ("models/counting",),
        "a gated MLP is counted with two matrices instead of three",
    ),
    Mutation(
        "vision-positions-not-squared",
        "models",
        "models/counting.py",
        "        embed += (v.image // v.patch) ** 2 * w",
        "        embed += (v.image // v.patch) * w",
        ("multimodal/problems", "models/counting"),
        "learned positions are counted per patch row, not per patch",
    ),
    Mutation(
        "serving-kv-heads-not-split",
        "models",
        "serving/models.py",
        "        kv_heads = self.num_kv_heads // tp_size",
        "        kv_heads = self.num_kv_heads",
        ("serving/problems", "serving/index"),
        "the KV bytes per token ignore tensor parallelism",
    ),
    Mutation(
        "parallel-ffn-two-matrices",
        "models",
        "parallel/memory.py",
        "        return 2 * h * h + 2 * h * kv + 3 * h * self.ffn",
        "        return 2 * h * h + 2 * h * kv + 2 * h * self.ffn",
        ("parallelism/problems", "parallelism/index"),
        "the layer's matmul parameters count two MLP matrices instead of three",
    ),
    # --- hybrid attention models (MiniMax, Kimi Linear, Jamba) ---
    Mutation(
        "moe-ignores-period",
        "models",
        "models/counting.py",
        "    return mlp.is_moe and i >= mlp.dense_layers and i % mlp.moe_period == mlp.moe_offset",
        "    return mlp.is_moe and i >= mlp.dense_layers",
        ("models/index",),
        "a mixture of experts every other layer (Jamba) is counted in every layer",
    ),
    Mutation(
        "mamba-state-as-heads",
        "models",
        "models/counting.py",
        '    if la.kind == "Mamba":\n        return la.inner * la.state_dim\n',
        "",
        ("models/problems",),
        "a Mamba layer's state is sized with the (zero) head fields of an attention-like layer",
    ),
    Mutation(
        "conv-state-whole-kernel",
        "models",
        "models/counting.py",
        "    return (la.conv_kernel - 1) * channels",
        "    return la.conv_kernel * channels",
        ("models/problems",),
        "the convolution state keeps conv_kernel inputs instead of conv_kernel - 1",
    ),
    Mutation(
        "kimi-full-layers-zero-based",
        "models",
        "registry/models/hybrid.py",
        '            layer_types=tuple("full" if i + 1 in _KIMI_FULL else "linear" for i in range(27)),',
        '            layer_types=tuple("full" if i in _KIMI_FULL else "linear" for i in range(27)),',
        ("models/index",),
        "Kimi Linear's 1-based list of full layers read as 0-based",
    ),
    Mutation(
        "minimax-softmax-first-of-eight",
        "models",
        "registry/models/hybrid.py",
        '            layer_types=_pattern(80, 8, 7, "full", "linear"),',
        '            layer_types=_pattern(80, 8, 0, "full", "linear"),',
        ("models/index",),
        "MiniMax's softmax layer put first in each block of eight instead of after seven",
    ),
]
