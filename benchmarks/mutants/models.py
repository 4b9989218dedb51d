"""Mutations of the models chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "dsv3-kv-lora-typo",
        "models",
        "registry/models.py",
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
        "registry/models.py",
        "        per_layer = (a.kv_lora_rank + a.qk_rope_dim) * nbytes",
        "        per_layer = a.kv_lora_rank * nbytes",
        ("models/counting",),
        "the MLA cache forgets the shared rope key",
    ),
]
