"""Checks of the labs of ``training/memory.md``.

The chapter's checks: Megatron-LM's own code at the pin, measuring tools.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from atlas.labkit.checks.training.common import UPSTREAM, SavedBytes, tensor_bytes
from atlas.labkit.pinned import definitions, module

ROLE = "check"


def megatron_memory(
    m: Any, lay: Any, seq: int, micro_batch: int, num_microbatches: int
) -> tuple[float, float]:
    """Megatron's theoretical weight-and-optimizer and activation bytes (SP, selective)."""
    import math

    ns = definitions(
        UPSTREAM,
        "megatron/training/theoretical_memory_usage.py",
        ["compute_weight_and_optimizer_memory", "compute_activation_memory"],
        {"math": math, "print_rank_0": lambda *a: None, "is_hybrid_model": lambda a: False},
    )
    a = m.attention
    args = types.SimpleNamespace(
        kv_channels=a.head_dim,
        num_attention_heads=a.q_heads,
        hidden_size=m.hidden,
        group_query_attention=a.kv_heads != a.q_heads,
        num_query_groups=a.kv_heads,
        num_experts=None,
        swiglu=True,
        moe_shared_expert_intermediate_size=None,
        moe_latent_size=None,
        num_layers=m.layers,
        mtp_num_layers=None,
        normalization="RMSNorm",
        multi_latent_attention=False,
        padded_vocab_size=m.vocab,
        untie_embeddings_and_output_weights=not m.tied_embeddings,
        ffn_hidden_size=m.mlp.intermediate,
        moe_router_topk=None,
        add_bias_linear=False,
        expert_tensor_parallel_size=1,
        expert_model_parallel_size=1,
        pipeline_model_parallel_size=lay.pp,
        world_size=lay.gpus,
        tensor_model_parallel_size=lay.tp,
        data_parallel_size=lay.dp,
        use_distributed_optimizer=lay.distributed_optimizer,
        seq_length=seq,
        micro_batch_size=micro_batch,
        virtual_pipeline_model_parallel_size=None,
    )
    return (
        ns.compute_weight_and_optimizer_memory(args),
        ns.compute_activation_memory(args, num_microbatches),
    )


def megatron_num_microbatches(global_batch: int, micro_batch: int, data_parallel: int) -> int:
    """Microbatches per step on each rank, from Megatron-LM's own
    ``ConstantNumMicroBatchesCalculator`` at the pin (the global batch is split over the
    data-parallel ranks, then into micro batches)."""
    ns = module(UPSTREAM, "megatron/core/num_microbatches_calculator.py")
    calc = ns.ConstantNumMicroBatchesCalculator(
        global_batch, micro_batch, data_parallel, decrease_batch_size_if_needed=False, rank=1
    )
    return calc.get()


def small_config_bytes(
    s: int, b: int, h: int, a: int, layers: int, recompute: str | None
) -> dict[str, int]:
    """Build ``layers`` bf16 GPT layers with the mixed-precision Adam, run one step, and
    measure what is held: the bytes of every tensor of the model and the optimizer, and the
    bytes autograd saved for backward during the forward pass."""
    from atlas.labkit.training.mixed import MixedPrecisionAdam
    from atlas.labkit.training.recompute import build_stack, stack_forward

    stack = build_stack(layers, h, a, recompute)
    opt = MixedPrecisionAdam(stack.parameters())
    x = torch.randn(s, b, h, dtype=torch.bfloat16, requires_grad=True)
    with SavedBytes(stack.parameters()) as saved:
        y = stack_forward(stack, x, recompute)
    y.float().pow(2).mean().backward()
    applied, _ = opt.step()
    return {
        "params": sum(p.numel() for p in stack.parameters()),
        "state": sum(tensor_bytes(v) for v in opt.state_tensors().values()),
        "activations": saved.total,
        "applied": applied,
    }
