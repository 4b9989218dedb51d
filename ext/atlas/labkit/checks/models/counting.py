"""Checks of the labs of ``models/counting.md``.

The chapter's checks: the registry against the outside world.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from atlas.labkit.checks.models.common import Block, Decoder, RMSNorm, _linear
from atlas.labkit.models.counting import layer_types
from atlas.labkit.pinned import module
from atlas.labkit.registry.models import MODELS
from atlas.labkit.registry.schema import Model

ROLE = "check"


def count_tensors(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def count_by_building(m: Model) -> int:
    """Parameters of ``m``'s text decoder counted on real modules (meta device): the
    embedding, head and final norm, plus one built layer of each distinct kind (attention
    kind, dense or MoE) times the number of layers of that kind."""
    device = torch.device("meta")
    total = count_tensors(nn.Embedding(m.vocab, m.hidden, device=device))
    total += count_tensors(RMSNorm(m.hidden, device))
    if not m.tied_embeddings:
        total += count_tensors(_linear(m.hidden, m.vocab, False, device))
    signatures: dict[tuple, list[int]] = {}
    for i, kind in enumerate(layer_types(m)):
        moe = m.mlp.is_moe and i >= m.mlp.dense_layers
        signatures.setdefault((kind, moe), []).append(i)
    for layers in signatures.values():
        total += len(layers) * count_tensors(Block(m, layers[0], device))
    return total


def scaled_down(name: str, **changes) -> Model:
    """A small model of the same family: same structure, small dimensions."""
    m = MODELS[name]
    a = m.attention
    layers = changes.pop("layers", 4)
    kinds = a.layer_types[:layers] if a.layer_types else ()
    attn = dataclasses.replace(
        a,
        q_heads=8,
        kv_heads=8 if a.kind in ("MHA", "MLA") else 2,
        head_dim=8,
        layer_types=kinds,
        window=4 if a.window else 0,
        q_lora_rank=12 if a.q_lora_rank else 0,
        kv_lora_rank=16 if a.kv_lora_rank else 0,
        qk_nope_dim=8 if a.kv_lora_rank else 0,
        qk_rope_dim=4 if a.kv_lora_rank else 0,
        v_head_dim=8 if a.kv_lora_rank else 0,
    )
    mlp = dataclasses.replace(
        m.mlp,
        intermediate=48 if m.mlp.intermediate else 0,
        experts=8 if m.mlp.experts else 0,
        top_k=2 if m.mlp.experts else 0,
        expert_intermediate=16 if m.mlp.experts else 0,
        shared_intermediate=16 if m.mlp.shared_experts else 0,
        dense_layers=min(m.mlp.dense_layers, 1),
    )
    return dataclasses.replace(
        m,
        name=f"{name} (scaled)",
        layers=layers,
        hidden=32,
        vocab=97,
        attention=attn,
        mlp=mlp,
        vision=None,
        **changes,
    )


@dataclass(frozen=True)
class Run:
    flops: list[int]  # FLOPs counted for each token's forward
    cache_bytes: int  # bytes held by the KV cache after the last token


def run_tokens(m: Model, n_tokens: int, seed: int = 0) -> Run:
    """Feed ``n_tokens`` tokens one at a time through a real scaled model; count each step's
    FLOPs with ``FlopCounterMode`` and measure the cache tensors at the end."""
    torch.manual_seed(seed)
    decoder = Decoder(m).requires_grad_(False)
    caches: list[dict] = [{} for _ in range(m.layers)]
    flops = []
    for t in range(n_tokens):
        counter = FlopCounterMode(display=False)
        with counter:
            decoder.step(t % m.vocab, caches)
        flops.append(counter.get_total_flops())
    nbytes = sum(t.numel() * 2 for c in caches for t in c.values())  # as if stored in bf16
    return Run(flops=flops, cache_bytes=nbytes)


MEGATRON_FILE = "megatron/training/theoretical_memory_usage.py"


def megatron_arguments(m: Model) -> SimpleNamespace:
    """The Megatron-LM arguments that describe ``m`` (as slime's model scripts pass them)."""
    a, mlp = m.attention, m.mlp
    moe = mlp.is_moe
    return SimpleNamespace(
        num_layers=m.layers,
        hidden_size=m.hidden,
        num_attention_heads=a.q_heads,
        kv_channels=a.head_dim if a.kind != "MLA" else a.qk_nope_dim,
        group_query_attention=a.kind != "MLA" and a.kv_heads != a.q_heads,
        num_query_groups=a.kv_heads,
        multi_latent_attention=a.kind == "MLA",
        q_lora_rank=a.q_lora_rank or None,
        kv_lora_rank=a.kv_lora_rank,
        qk_head_dim=a.qk_nope_dim,
        qk_pos_emb_head_dim=a.qk_rope_dim,
        v_head_dim=a.v_head_dim,
        ffn_hidden_size=mlp.intermediate,
        swiglu=True,
        num_experts=mlp.experts if moe else None,
        moe_layer_freq=[0] * mlp.dense_layers + [1] * (m.layers - mlp.dense_layers),
        moe_ffn_hidden_size=mlp.expert_intermediate,
        moe_router_topk=mlp.top_k,
        moe_shared_expert_intermediate_size=(
            mlp.shared_intermediate * mlp.shared_experts if mlp.shared_experts else None
        ),
        moe_latent_size=None,  # no registry model routes its experts on a latent width
        mtp_num_layers=None,
        normalization="RMSNorm",
        padded_vocab_size=m.vocab,
        untie_embeddings_and_output_weights=not m.tied_embeddings,
        add_bias_linear=False,
        # parallel layout: one rank, no distributed optimizer
        world_size=1,
        data_parallel_size=1,
        tensor_model_parallel_size=1,
        pipeline_model_parallel_size=1,
        expert_tensor_parallel_size=1,
        expert_model_parallel_size=1,
        use_distributed_optimizer=False,
    )


def megatron_counts(m: Model) -> dict[str, float]:
    """Run ``compute_weight_and_optimizer_memory`` from Megatron-LM at the pin on ``m``'s
    arguments and read back the totals it prints (in billions, two decimals)."""
    namespace = {"print_rank_0": print, "is_hybrid_model": lambda args: False}
    megatron = module(  # its one relative import is the two helpers supplied here
        "megatron",
        MEGATRON_FILE,
        namespace=namespace,
        edit=lambda text: text.replace("from .utils import is_hybrid_model, print_rank_0", ""),
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        megatron.compute_weight_and_optimizer_memory(megatron_arguments(m), verbose=True)
    found = {}
    for line in out.getvalue().splitlines():
        if line.startswith("Total number of parameters in billions:"):
            found["total_b"] = float(line.rsplit(":", 1)[1])
        if line.startswith("Total number of active parameters in billions:"):
            found["active_b"] = float(line.rsplit(":", 1)[1])
    return found
