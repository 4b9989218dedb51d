"""Checks of the labs of ``serving/model-runner.md``.

The chapter's checks: Run nano-vllm's own pure-Python engine parts, read from its git objects at
the pin.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from atlas.labkit.checks.common.attention import causal_attention
from atlas.labkit.checks.serving.common import UPSTREAM
from atlas.labkit.pinned import definitions, package, pinned

ROLE = "check"


LINEAR_FILES = ("nanovllm/layers/linear.py",)


def load_linear(root: Path | None = None) -> types.ModuleType:
    """nano-vllm's tensor-parallel linear layers (``nanovllm/layers/linear.py``) at the pin."""
    return package(UPSTREAM, LINEAR_FILES, root=root)["nanovllm.layers.linear"]


MODEL_RUNNER = "nanovllm/engine/model_runner.py"
RUNNER_METHODS = ("allocate_kv_cache", "capture_cudagraph", "run_model")


class _Context:
    """``set_context``/``get_context``/``reset_context`` as nano-vllm's ``utils/context.py``
    names them: one global holder of the step's attention metadata."""

    def __init__(self) -> None:
        self.current = types.SimpleNamespace()

    def set_context(
        self,
        is_prefill: bool,
        cu_seqlens_q: Any = None,
        cu_seqlens_k: Any = None,
        max_seqlen_q: int = 0,
        max_seqlen_k: int = 0,
        slot_mapping: Any = None,
        context_lens: Any = None,
        block_tables: Any = None,
    ) -> None:
        self.current = types.SimpleNamespace(
            is_prefill=is_prefill,
            slot_mapping=slot_mapping,
            context_lens=context_lens,
            block_tables=block_tables,
        )

    def get_context(self) -> types.SimpleNamespace:
        return self.current

    def reset_context(self) -> None:
        self.current = types.SimpleNamespace()


class _FakeGraph:
    """Stands in for ``torch.cuda.CUDAGraph``: remembers that it was replayed."""

    replayed: list[_FakeGraph] = []

    def pool(self) -> object:
        return object()

    def replay(self) -> None:
        _FakeGraph.replayed.append(self)


class _FakeCuda:
    """What ``allocate_kv_cache`` and ``capture_cudagraph`` ask of ``torch.cuda``: a GPU of
    ``total`` bytes of which ``used`` are taken, an allocator that peaked at ``peak`` and now
    holds ``current``; graphs that record nothing."""

    def __init__(self, total: int, used: int, peak: int, current: int) -> None:
        self.total, self.used, self.peak, self.current = total, used, peak, current
        self.CUDAGraph = _FakeGraph

    def mem_get_info(self) -> tuple[int, int]:
        return self.total - self.used, self.total

    def memory_stats(self) -> dict[str, int]:
        return {"allocated_bytes.all.peak": self.peak, "allocated_bytes.all.current": self.current}

    def graph(self, graph: _FakeGraph, pool: object = None) -> Any:
        import contextlib

        return contextlib.nullcontext()

    def synchronize(self) -> None:
        pass


class _FakeTorch:
    """``torch`` with its CUDA parts replaced: ``empty`` allocates on the meta device (sizes
    without memory), ``inference_mode`` is a no-op decorator; everything else is torch."""

    def __init__(self, cuda: _FakeCuda, dtype: Any) -> None:
        import torch

        self._torch, self.cuda, self._dtype = torch, cuda, dtype

    def __getattr__(self, name: str) -> Any:
        return getattr(self._torch, name)

    def empty(self, *shape: int, **kwargs: Any) -> Any:
        return self._torch.empty(*shape, device="meta", dtype=kwargs.get("dtype", self._dtype))

    def inference_mode(self) -> Callable[[Callable], Callable]:
        return lambda fn: fn


def load_model_runner(root: Path | None = None) -> types.SimpleNamespace:
    """Three methods of nano-vllm's ``ModelRunner`` at the pin, as plain functions of a
    stand-in ``self``: ``allocate_kv_cache``, ``capture_cudagraph`` and ``run_model``.

    The module itself imports the model, FlashAttention and NCCL, so only these method bodies
    are compiled (found with ``ast`` in the file read from the git objects). The attention
    context they set and read is a plain holder here (:class:`_Context`): it only carries the
    batch's metadata from ``run_model`` to the (absent) attention layers.
    """
    files = pinned(UPSTREAM, root)
    files.read_bytes(MODEL_RUNNER)  # absent objects skip the lab here, before any set-up
    return types.SimpleNamespace(label=files.label(7), root=root, context=_Context())


def _runner_self(
    ns: types.SimpleNamespace,
    model: Any,
    *,
    gpu_bytes: int,
    used: int,
    activation_peak: int,
    utilization: float,
    block_size: int,
    tp_size: int,
    max_num_seqs: int,
    max_model_len: int,
) -> tuple[types.SimpleNamespace, dict[str, Any]]:
    import torch

    hf = types.SimpleNamespace(
        num_key_value_heads=model.num_kv_heads,
        num_attention_heads=model.num_heads,
        hidden_size=model.hidden_size,
        head_dim=model.head_dim,
        num_hidden_layers=model.num_layers,
        dtype={2: torch.bfloat16, 1: torch.float8_e4m3fn, 4: torch.float32}[model.dtype_bytes],
    )
    config = types.SimpleNamespace(
        hf_config=hf,
        gpu_memory_utilization=utilization,
        num_kvcache_blocks=-1,
        max_num_seqs=max_num_seqs,
        max_model_len=max_model_len,
    )
    hidden = model.hidden_size
    runner = types.SimpleNamespace(
        config=config,
        block_size=block_size,
        world_size=tp_size,
        enforce_eager=False,
        model=lambda ids, pos: torch.zeros(ids.shape[0], hidden),
    )
    runner.model.compute_logits = lambda x: x  # type: ignore[attr-defined]
    runner.model.modules = lambda: []  # type: ignore[attr-defined]
    cuda = _FakeCuda(gpu_bytes, used, activation_peak, 0)
    scope = {
        "torch": _FakeTorch(cuda, hf.dtype),
        "set_context": ns.context.set_context,
        "get_context": ns.context.get_context,
        "reset_context": ns.context.reset_context,
    }
    methods = [f"ModelRunner.{name}" for name in RUNNER_METHODS]
    return runner, definitions(UPSTREAM, MODEL_RUNNER, methods, scope, root=ns.root)


def nanovllm_kv_blocks(
    ns: types.SimpleNamespace,
    model: Any,
    *,
    gpu_bytes: int,
    weight_bytes: int,
    activation_peak: int = 0,
    utilization: float = 0.9,
    block_size: int = 256,
    tp_size: int = 1,
) -> dict[str, int]:
    """Run nano-vllm's ``allocate_kv_cache`` for ``model`` (a ``ModelConfig``) on a stand-in
    GPU of ``gpu_bytes`` on which the weights take ``weight_bytes`` and the warm-up peaked
    ``activation_peak`` above them. Returns the blocks it chose and the bytes of the KV tensor
    it allocated (on the meta device)."""
    runner, scope = _runner_self(
        ns,
        model,
        gpu_bytes=gpu_bytes,
        used=weight_bytes,
        activation_peak=activation_peak,
        utilization=utilization,
        block_size=block_size,
        tp_size=tp_size,
        max_num_seqs=512,
        max_model_len=4096,
    )
    scope["allocate_kv_cache"](runner)
    cache = runner.kv_cache
    return {
        "num_blocks": runner.config.num_kvcache_blocks,
        "cache_bytes": cache.numel() * cache.element_size(),
        "shape": tuple(cache.shape),
    }


def nanovllm_graph_buckets(
    ns: types.SimpleNamespace,
    model: Any,
    max_num_seqs: int,
    batches: list[int],
    block_size: int = 256,
    max_model_len: int = 4096,
) -> tuple[list[int], list[int | str | None]]:
    """Run nano-vllm's ``capture_cudagraph`` (graphs faked) and then ``run_model`` for decode
    batches of each size in ``batches``. Returns the captured batch sizes and, per batch, the
    size of the graph replayed (``None`` when ``run_model`` runs eagerly, ``"StopIteration"``
    when it finds no graph and fails)."""
    import torch

    runner, scope = _runner_self(
        ns,
        model,
        gpu_bytes=0,
        used=0,
        activation_peak=0,
        utilization=0.9,
        block_size=block_size,
        tp_size=1,
        max_num_seqs=max_num_seqs,
        max_model_len=max_model_len,
    )
    scope["capture_cudagraph"](runner)
    size_of = {id(graph): bs for bs, graph in runner.graphs.items()}
    chosen: list[int | str | None] = []
    for bs in batches:
        ns.context.set_context(
            False,
            slot_mapping=torch.zeros(bs, dtype=torch.int32),
            context_lens=torch.ones(bs, dtype=torch.int32),
            block_tables=torch.zeros(bs, 1, dtype=torch.int32),
        )
        _FakeGraph.replayed.clear()
        ids = torch.zeros(bs, dtype=torch.int64)
        try:
            scope["run_model"](runner, ids, ids, False)
        except StopIteration:  # no captured graph is large enough: run_model fails
            chosen.append("StopIteration")
        else:
            chosen.append(size_of[id(_FakeGraph.replayed[0])] if _FakeGraph.replayed else None)
        ns.context.reset_context()
    return list(runner.graph_bs), chosen


def tp_block_matches_dense(
    rank: int,
    world_size: int,
    linear: types.ModuleType,
    hidden: int = 32,
    heads: int = 4,
    kv_heads: int = 2,
    head_dim: int = 8,
    intermediate: int = 48,
    tokens: int = 5,
) -> dict[str, object]:
    """Run on ``world_size`` ranks (through ``run_ranks``); compare with the dense block."""
    torch.set_default_dtype(torch.float64)
    gen = torch.Generator().manual_seed(1234)  # the same full weights on every rank

    def rand(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen) / shape[-1] ** 0.5

    wq, wk = rand(heads * head_dim, hidden), rand(kv_heads * head_dim, hidden)
    wv = rand(kv_heads * head_dim, hidden)
    wo = rand(hidden, heads * head_dim)
    wg, wu, wd = rand(intermediate, hidden), rand(intermediate, hidden), rand(hidden, intermediate)
    x = rand(tokens, hidden)

    qkv = linear.QKVParallelLinear(hidden, head_dim, heads, kv_heads)
    for shard, w in (("q", wq), ("k", wk), ("v", wv)):
        qkv.weight.weight_loader(qkv.weight, w, shard)
    o_proj = linear.RowParallelLinear(heads * head_dim, hidden)
    o_proj.weight.weight_loader(o_proj.weight, wo)
    gate_up = linear.MergedColumnParallelLinear(hidden, [intermediate, intermediate])
    gate_up.weight.weight_loader(gate_up.weight, wg, 0)
    gate_up.weight.weight_loader(gate_up.weight, wu, 1)
    down = linear.RowParallelLinear(intermediate, hidden)
    down.weight.weight_loader(down.weight, wd)

    with torch.no_grad():
        local_heads, local_kv = heads // world_size, kv_heads // world_size
        sizes = [local_heads * head_dim, local_kv * head_dim, local_kv * head_dim]
        q, k, v = qkv(x).split(sizes, -1)
        attn = o_proj(
            causal_attention(
                q.view(tokens, local_heads, head_dim),
                k.view(tokens, local_kv, head_dim),
                v.view(tokens, local_kv, head_dim),
            ).reshape(tokens, -1)
        )
        g, u = gate_up(x).chunk(2, -1)
        mlp = down(F.silu(g) * u)

        dense_attn = (
            causal_attention(
                (x @ wq.T).view(tokens, heads, head_dim),
                (x @ wk.T).view(tokens, kv_heads, head_dim),
                (x @ wv.T).view(tokens, kv_heads, head_dim),
            ).reshape(tokens, -1)
            @ wo.T
        )
        dense_mlp = (F.silu(x @ wg.T) * (x @ wu.T)) @ wd.T
    return {
        "qkv_rows": qkv.weight.shape[0],
        "gate_up_rows": gate_up.weight.shape[0],
        "attention_ok": torch.allclose(attn, dense_attn, atol=1e-12),
        "mlp_ok": torch.allclose(mlp, dense_mlp, atol=1e-12),
    }
