"""Checks of the labs of ``training/index.md``.

The chapter's checks: Megatron-LM's own code at the pin, measuring tools.
"""

from __future__ import annotations

import types
from typing import Any

from atlas.labkit.checks.training.common import UPSTREAM
from atlas.labkit.pinned import definitions

ROLE = "check"


def megatron_flops(m: Any, seq: int, batch: int) -> float:
    """Megatron's ``num_floating_point_operations`` for a dense registry model."""
    ns = definitions(
        UPSTREAM,
        "megatron/training/training.py",
        ["num_floating_point_operations"],
        {"is_hybrid_model": lambda args: False, "is_linear_attention_variant": lambda v: False},
    )
    a = m.attention
    args = types.SimpleNamespace(
        seq_length=seq,
        hidden_size=m.hidden,
        num_layers=m.layers,
        ffn_hidden_size=m.mlp.intermediate,
        num_attention_heads=a.q_heads,
        group_query_attention=a.kv_heads != a.q_heads,
        num_query_groups=a.kv_heads,
        kv_channels=a.head_dim,
        swiglu=True,
        padded_vocab_size=m.vocab,
        num_experts=None,
        mtp_num_layers=None,
        moe_ffn_hidden_size=None,
        moe_latent_size=None,
        moe_shared_expert_intermediate_size=None,
        multi_latent_attention=False,
        attention_output_gate=False,
        experimental_attention_variant=None,
    )
    return ns.num_floating_point_operations(args, batch)
