"""Harness of the training chapter's labs: Megatron-LM's own code at the pin, measuring tools.

Nothing here is taught; the labs use it to check the taught modules against something
independent of them.

- Megatron-LM's own functions at the pin, each cut out of its file by
  :func:`atlas.labkit.pinned.definitions` (which skips the lab when the objects are absent)
  and wrapped to take this chapter's inputs.
- :data:`cpu_torch` is ``torch`` with ``device=...`` dropped from tensor factories, for
  Megatron code that places its scalars on ``'cuda'``.
- :class:`SavedBytes` counts the bytes autograd keeps for backward (saved-tensor hooks).
- :func:`tensor_bytes` sums the bytes of real tensors.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Any

import torch

from atlas.labkit.pinned import definitions, registered

UPSTREAM = "megatron"
_QUIET = __import__("logging").getLogger("megatron_at_pin")  # Megatron's log lines stay out of labs
_QUIET.addHandler(__import__("logging").NullHandler())
_QUIET.propagate = False





class _CPUTorch(types.ModuleType):
    """``torch`` whose tensor factories ignore ``device=`` (Megatron puts scalars on CUDA)."""

    def __init__(self) -> None:
        super().__init__("torch")

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)

    @staticmethod
    def tensor(*args: Any, device: Any = None, **kwargs: Any) -> torch.Tensor:
        return torch.tensor(*args, **kwargs)

    @staticmethod
    def zeros(*args: Any, device: Any = None, **kwargs: Any) -> torch.Tensor:
        return torch.zeros(*args, **kwargs)


cpu_torch = _CPUTorch()


def tensor_bytes(tensors: Iterable[torch.Tensor]) -> int:
    """Bytes held by ``tensors`` (elements times element size, each tensor once)."""
    seen: set[tuple[int, tuple[int, ...]]] = set()
    total = 0
    for t in tensors:
        key = (t.data_ptr(), tuple(t.shape))
        if key in seen:
            continue
        seen.add(key)
        total += t.numel() * t.element_size()
    return total


class SavedBytes:
    """Count what autograd saves for backward inside a ``with`` block.

    Every tensor that an operation saves passes through the pack hook. Parameters (and views of
    them, such as a transposed weight) are not activations and are skipped; a tensor saved by
    two operations is counted once (same address, shape and strides). ``by_dtype`` splits the
    total by element type (a dropout mask is ``torch.bool``: one byte per element).
    """

    def __init__(self, params: Iterable[torch.Tensor] = ()) -> None:
        self._params = {p.untyped_storage().data_ptr() for p in params}
        self._seen: set[tuple[int, tuple[int, ...], tuple[int, ...]]] = set()
        self.total = 0
        self.by_dtype: dict[str, int] = {}
        self.tensors = 0
        self._hooks: Any = None

    def _pack(self, t: torch.Tensor) -> torch.Tensor:
        if t.untyped_storage().data_ptr() not in self._params:
            key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()))
            if key not in self._seen:
                self._seen.add(key)
                nbytes = t.numel() * t.element_size()
                self.total += nbytes
                name = str(t.dtype).removeprefix("torch.")
                self.by_dtype[name] = self.by_dtype.get(name, 0) + nbytes
                self.tensors += 1
        return t

    def __enter__(self) -> SavedBytes:
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hooks.__exit__(*exc)


# ---------------------------------------------------------------------------------------------
# Megatron-LM functions at the pin, each wrapped to take this chapter's inputs
# ---------------------------------------------------------------------------------------------

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
        seq_length=seq, hidden_size=m.hidden, num_layers=m.layers, ffn_hidden_size=m.mlp.intermediate,
        num_attention_heads=a.q_heads, group_query_attention=a.kv_heads != a.q_heads,
        num_query_groups=a.kv_heads, kv_channels=a.head_dim, swiglu=True, padded_vocab_size=m.vocab,
        num_experts=None, mtp_num_layers=None, moe_ffn_hidden_size=None, moe_latent_size=None,
        moe_shared_expert_intermediate_size=None, multi_latent_attention=False,
        attention_output_gate=False, experimental_attention_variant=None,
    )
    return ns.num_floating_point_operations(args, batch)


def megatron_grad_scaler() -> type:
    """Megatron's ``DynamicGradScaler`` class, its CUDA scalars placed on the CPU."""
    from abc import ABC, abstractmethod
    from typing import Dict

    ns = definitions(
        UPSTREAM,
        "megatron/core/optimizer/grad_scaler.py",
        ["MegatronGradScaler", "DynamicGradScaler"],
        {"torch": cpu_torch, "ABC": ABC, "abstractmethod": abstractmethod, "Dict": Dict},
    )
    return ns.DynamicGradScaler


def megatron_param_ranges(numels: list[int], dp: int, rank: int) -> list[dict[str, tuple[int, int]] | None]:
    """Megatron's ``_build_model_gbuf_param_range_map`` for parameters laid back to back in
    one bucket (offset 0), this rank's shard of the padded buffer as its world range."""
    from typing import Dict, Tuple

    ns = definitions(
        UPSTREAM,
        "megatron/core/optimizer/distrib_optimizer.py",
        ["Range", "DistributedOptimizer._build_model_gbuf_param_range_map"],
        {"Dict": Dict, "Tuple": Tuple, "torch": torch},
    )
    total = sum(numels)
    size = -(-total // dp)
    index_map, start = {}, 0
    keys = [f"p{i}" for i in range(len(numels))]
    for key, n in zip(keys, numels):
        index_map[key] = (start, start + n, 0)
        start += n
    world = ns.Range(rank * size, (rank + 1) * size)
    found = ns._build_model_gbuf_param_range_map(None, index_map, world, 0)
    out = []
    for key in keys:
        r = found.get(key)
        out.append(None if r is None else {k: (v.start, v.end) for k, v in r.items()})
    return out


def megatron_sharded_tensor() -> type:
    """Megatron's ``dist_checkpointing.mapping.ShardedTensor`` class."""
    import typing
    from abc import ABC, abstractmethod
    from dataclasses import dataclass, field, replace

    class CheckpointingException(Exception):
        pass

    scope = {k: getattr(typing, k) for k in ("Any", "Callable", "Dict", "List", "Optional", "Tuple", "Union")}
    scope.update(torch=torch, ABC=ABC, abstractmethod=abstractmethod, dataclass=dataclass,
                 field=field, replace=replace, CheckpointingException=CheckpointingException)
    scope["ReplicaId"] = typing.Union[int, typing.Tuple[int, ...]]
    ns = definitions(UPSTREAM, "megatron/core/dist_checkpointing/mapping.py", ["ShardedBase", "ShardedTensor"], scope)
    return ns.ShardedTensor


def megatron_indexed() -> types.SimpleNamespace:
    """Megatron's ``.idx`` writer and reader, ``.bin`` memory-map reader and dataset builder."""
    import gc
    import logging
    import shutil
    import struct
    import time
    import typing
    from abc import ABC, abstractmethod
    from collections.abc import Iterable as _Iterable
    from enum import Enum
    from functools import lru_cache
    from types import TracebackType

    import numpy

    msc = types.SimpleNamespace(is_enabled=lambda: False)
    scope = {k: getattr(typing, k) for k in ("List", "Optional", "Tuple", "Type", "Union")}
    scope.update(numpy=numpy, struct=struct, time=time, gc=gc, shutil=shutil, torch=torch, Enum=Enum,
                 lru_cache=lru_cache, ABC=ABC, abstractmethod=abstractmethod, Iterable=_Iterable,
                 TracebackType=TracebackType, logger=_QUIET,
                 logging=logging, log_single_rank=lambda *a, **k: None,
                 MultiStorageClientFeature=msc)
    names = ["_INDEX_HEADER", "DType", "_IndexWriter", "_IndexReader", "_BinReader", "_MMapBinReader",
             "IndexedDatasetBuilder", "get_idx_path", "get_bin_path"]
    return definitions(UPSTREAM, "megatron/core/datasets/indexed_dataset.py", names, scope)


def megatron_gpt_indices(reader: Any, seq_length: int, num_samples: int, seed: int) -> tuple[Any, Any, Any]:
    """The document, sample and shuffle indices of Megatron's ``GPTDataset`` at the pin.

    Megatron's own method decides the epochs, whether the last epoch is kept apart, and does
    the shuffles; the sample index, which Megatron builds in C++ (``helpers.cpp``), is supplied
    by this chapter's :func:`~atlas.labkit.training.data.sample_index`.
    """
    import logging
    import os
    import time
    import typing

    import numpy

    from atlas.labkit.training.data import sample_index

    helpers = types.ModuleType("megatron.core.datasets.helpers")
    helpers.build_sample_idx = lambda sizes, doc_idx, seq, *rest: sample_index(sizes, doc_idx, seq)
    pkg = types.ModuleType("megatron.core.datasets")
    pkg.helpers = helpers
    split = types.SimpleNamespace(**{k: types.SimpleNamespace(name=k) for k in ("train", "valid", "test")})
    scope = {k: getattr(typing, k) for k in ("Dict", "Optional", "Tuple")}
    scope.update(numpy=numpy, os=os, time=time, torch=torch, logging=logging, Split=split,
                 logger=_QUIET, log_single_rank=lambda *a, **k: None)
    ns = definitions(
        UPSTREAM,
        "megatron/core/datasets/gpt_dataset.py",
        ["GPTDataset._build_document_sample_shuffle_indices", "GPTDataset._get_num_tokens_per_epoch",
         "GPTDataset._get_num_epochs", "_build_document_index", "_build_shuffle_index"],
        scope,
    )
    config = types.SimpleNamespace(
        defer_npy_index_mmap=False, path_to_cache=None, mock=True, fast_cache_load=False,
        sequence_length=seq_length, add_extra_token_to_sequence=1, random_seed=seed,
        drop_last_partial_validation_sequence=True,
    )
    fake = types.SimpleNamespace(
        config=config, dataset=types.SimpleNamespace(sequence_lengths=reader.sequence_lengths),
        indices=numpy.arange(len(reader), dtype=numpy.int32), num_samples=num_samples,
        index_split=split.train, unique_description_hash="x",
    )
    fake._get_num_tokens_per_epoch = types.MethodType(ns._get_num_tokens_per_epoch, fake)
    fake._get_num_epochs = types.MethodType(ns._get_num_epochs, fake)
    with registered({"megatron.core.datasets": pkg, "megatron.core.datasets.helpers": helpers}):
        return ns._build_document_sample_shuffle_indices(fake)


def megatron_sampler() -> type:
    """Megatron's ``MegatronPretrainingSampler`` class."""
    ns = definitions(UPSTREAM, "megatron/training/datasets/data_samplers.py", ["MegatronPretrainingSampler"])
    return ns.MegatronPretrainingSampler


def megatron_memory(m: Any, lay: Any, seq: int, micro_batch: int, num_microbatches: int) -> tuple[float, float]:
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
        kv_channels=a.head_dim, num_attention_heads=a.q_heads, hidden_size=m.hidden,
        group_query_attention=a.kv_heads != a.q_heads, num_query_groups=a.kv_heads,
        num_experts=None, swiglu=True, moe_shared_expert_intermediate_size=None,
        num_layers=m.layers, mtp_num_layers=None, normalization="RMSNorm",
        multi_latent_attention=False, padded_vocab_size=m.vocab,
        untie_embeddings_and_output_weights=not m.tied_embeddings, ffn_hidden_size=m.mlp.intermediate,
        moe_router_topk=None, add_bias_linear=False, expert_tensor_parallel_size=1,
        expert_model_parallel_size=1, pipeline_model_parallel_size=lay.pp,
        world_size=lay.gpus, tensor_model_parallel_size=lay.tp, data_parallel_size=lay.dp,
        use_distributed_optimizer=lay.distributed_optimizer, seq_length=seq,
        micro_batch_size=micro_batch, virtual_pipeline_model_parallel_size=None,
    )
    return (ns.compute_weight_and_optimizer_memory(args),
            ns.compute_activation_memory(args, num_microbatches))


def megatron_spike_test(threshold: float, num_samples: int) -> Any:
    """Megatron's ``RerunStateMachine.is_unexpectedly_large`` on a fresh state, as a function
    of one value (the loss as a 0-dim tensor)."""
    import math

    ns = definitions(UPSTREAM, "megatron/core/rerun_state_machine.py",
                       ["RerunStateMachine.is_unexpectedly_large"],
                       {"math": math, "torch": torch, "logger": _QUIET})
    state = types.SimpleNamespace(large_value_counts={}, max_values={})
    return lambda value: ns.is_unexpectedly_large(
        state, torch.tensor(value), threshold=threshold, context="loss", num_samples=num_samples)


# ---------------------------------------------------------------------------------------------
# Rank functions (run through atlas.labkit.run_ranks) and drivers
# ---------------------------------------------------------------------------------------------

def _dense_mlp(seed: int, h: int = 8, f: int = 32) -> list[torch.Tensor]:
    """A dense MLP's four tensors (fc1 weight and bias, fc2 weight and bias), float64."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g, dtype=torch.float64) for shape in ((f, h), (f,), (h, f), (h,))]


def _tp_slices(dense: list[torch.Tensor], tp: int, rank: int) -> list[torch.Tensor]:
    w1, b1, w2, b2 = dense
    return [w1.chunk(tp, 0)[rank], b1.chunk(tp, 0)[rank], w2.chunk(tp, 1)[rank], b2]


def _tp_forward(x: torch.Tensor, local: list[torch.Tensor]) -> torch.Tensor:
    import torch.distributed as dist
    import torch.nn.functional as F

    w1, b1, w2, b2 = local
    partial = F.gelu(x @ w1.T + b1) @ w2.T
    dist.all_reduce(partial)  # the row-parallel layer's sum over the TP group
    return partial + b2


def save_at_tp(rank: int, world: int, directory: str, seed: int, use_async: bool) -> list[str]:
    """Save a TP MLP sharded over ``world`` ranks. With ``use_async`` the save runs in the
    background while the live weights are changed (a stand-in for the next optimizer step)."""
    import torch.distributed as dist

    from atlas.labkit.training.ckpt import AsyncSave, finalize, mlp_sharded_state_dict, save_sharded

    local = _tp_slices(_dense_mlp(seed), world, rank)
    shards = mlp_sharded_state_dict(*local, tp=world, rank=rank)
    if use_async:
        request = AsyncSave(shards, directory, rank)
        with torch.no_grad():
            for t in local:
                t.add_(1.0)  # training goes on; the checkpoint must not see this
        request.finalize(barrier=dist.barrier)
        return request.files
    files = save_sharded(shards, directory, rank)
    dist.barrier()
    finalize(shards, directory, rank)
    return files


def load_at_tp(rank: int, world: int, directory: str, seed: int) -> dict[str, Any]:
    """Load the MLP at TP size ``world`` and compare with the dense MLP built from ``seed``."""
    import torch.nn.functional as F

    from atlas.labkit.training.ckpt import load_sharded, mlp_sharded_state_dict

    dense = _dense_mlp(seed)
    empty = [torch.empty_like(t) for t in _tp_slices(dense, world, rank)]
    requests = [sh.without_data() for sh in mlp_sharded_state_dict(*empty, tp=world, rank=rank)]
    local = [load_sharded(req, directory) for req in requests]
    x = torch.randn(5, dense[0].shape[1], generator=torch.Generator().manual_seed(99), dtype=torch.float64)
    w1, b1, w2, b2 = dense
    reference = F.gelu(x @ w1.T + b1) @ w2.T + b2  # the dense MLP, never saved or loaded
    out = _tp_forward(x, local)
    return {
        "shapes": [tuple(t.shape) for t in local],
        "slices_equal": all(torch.equal(a, b) for a, b in zip(local, _tp_slices(dense, world, rank))),
        "output_matches_dense": bool(torch.allclose(out, reference, rtol=1e-12, atol=1e-12)),
    }


def clip_matches_torch(rank: int, world: int, seed: int, max_norm: float) -> dict[str, Any]:
    """Each rank holds a contiguous shard of one flat gradient; the global norm and the clipped
    shard must equal ``torch.nn.utils.clip_grad_norm_`` on the whole gradient."""
    from atlas.labkit.training.mixed import clip_by_global_norm, global_grad_norm

    g = torch.Generator().manual_seed(seed)
    grads = [torch.randn(n, generator=g, dtype=torch.float64) for n in (37, 64, 5, 90)]
    flat = torch.cat(grads)
    shard = list(flat.chunk(world))[rank].clone()
    local_only = float(shard.norm())  # what a rank would get without the all-reduce
    norm = global_grad_norm([shard])
    clip_by_global_norm([shard], max_norm, norm)
    params = [torch.nn.Parameter(torch.zeros_like(t)) for t in grads]
    for p, t in zip(params, grads):
        p.grad = t.clone()
    torch_norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
    torch_shard = list(torch.cat([p.grad for p in params]).chunk(world))[rank]
    return {
        "norm": norm,
        "norm_matches": abs(norm - torch_norm) < 1e-9 * torch_norm,
        "clipped_matches": bool(torch.allclose(shard, torch_shard, rtol=1e-9, atol=1e-12)),
        "local_norm": local_only,
    }


def resume_run(steps: int, stop_at: int | None = None, state: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train a small dropout MLP for ``steps`` steps on samples numbered from the data
    position; stop after ``stop_at`` steps and return the resume state, or start from
    ``state``. The samples are a function of their number, as an indexed dataset's are."""
    from atlas.labkit.training.ckpt import restore_state, resume_state

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Dropout(0.3), torch.nn.ReLU(),
                                torch.nn.Linear(16, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    consumed, it, batch = 0, 0, 4
    torch.manual_seed(1)  # the run's random stream (dropout), distinct from the init
    if state is not None:
        consumed, it = restore_state(state, model, opt)

    def sample(i: int) -> tuple[torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(10_000 + i)
        x = torch.randn(6, generator=g)
        return x, x.sum(0, keepdim=True).sin()

    losses = []
    while it < steps:
        xs, ys = zip(*(sample(consumed + j) for j in range(batch)))
        loss = torch.nn.functional.mse_loss(model(torch.stack(xs)), torch.stack(ys))
        opt.zero_grad()
        loss.backward()
        opt.step()
        consumed, it = consumed + batch, it + 1
        losses.append(float(loss.detach()))
        if stop_at is not None and it == stop_at:
            return {"state": resume_state(model, opt, consumed, it), "losses": losses}
    return {"params": torch.cat([p.detach().flatten() for p in model.parameters()]), "losses": losses}


def sharded_metadata_matches(tp: int, seed: int = 3) -> list[bool]:
    """Per TP rank: does our sharded state of the MLP carry the global shape, offset,
    fragmentation and replica id that Megatron's ``ShardedTensor.from_rank_offsets`` gives the
    same local tensors, cut the way Megatron's column- and row-parallel layers cut them?"""
    from atlas.labkit.training.ckpt import mlp_sharded_state_dict

    megatron = megatron_sharded_tensor()
    out = []
    for rank in range(tp):
        ours = mlp_sharded_state_dict(*_tp_slices(_dense_mlp(seed), tp, rank), tp=tp, rank=rank)
        axes = {"fc1.weight": [(0, rank, tp)], "fc1.bias": [(0, rank, tp)],
                "fc2.weight": [(1, rank, tp)], "fc2.bias": []}
        theirs = [megatron.from_rank_offsets(sh.key, sh.data, *axes[sh.key], replica_id=sh.replica_id)
                  for sh in ours]
        out.append(all(
            (o.global_shape, o.global_offset, o.axis_fragmentations, o.replica_id)
            == (tuple(t.global_shape), tuple(t.global_offset), tuple(t.axis_fragmentations), t.replica_id)
            for o, t in zip(ours, theirs)))
    return out


def small_config_bytes(s: int, b: int, h: int, a: int, layers: int, recompute: str | None) -> dict[str, int]:
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
