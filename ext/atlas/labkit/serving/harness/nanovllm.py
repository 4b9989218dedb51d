"""Run nano-vllm's own pure-Python engine parts, read from its git objects at the pin.

Nothing of nano-vllm is copied into this repository: the modules are read through
``atlas.upstream``'s object store at the pinned commit and executed in memory, under their
own names, so tracebacks point at ``nano-vllm@<sha>/nanovllm/...``. When the objects are
absent (no ``make upstreams`` yet, a CI without network) the loader raises
``UpstreamUnavailable`` (:mod:`atlas.labkit.pinned`), and the lab is skipped visibly.

``scheduler.py`` imports ``nanovllm.config``, whose module body loads a Hugging Face config
through ``transformers``. The scheduler reads only five fields of it, so for the scheduler
this loader supplies ``nanovllm.config.Config`` as a plain dataclass with those fields and
runs the real ``sampling_params``, ``sequence``, ``block_manager`` and ``scheduler`` modules.
"""

from __future__ import annotations

import random
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas.labkit.pinned import definitions, package, pinned

UPSTREAM = "nano-vllm"
BLOCK_MANAGER_FILES = (
    "nanovllm/sampling_params.py",
    "nanovllm/engine/sequence.py",
    "nanovllm/engine/block_manager.py",
)
SCHEDULER_FILES = BLOCK_MANAGER_FILES + ("nanovllm/engine/scheduler.py",)
LINEAR_FILES = ("nanovllm/layers/linear.py",)




@dataclass
class SchedulerConfig:
    """The fields of nano-vllm's ``Config`` that its ``Scheduler.__init__`` reads."""

    max_num_seqs: int = 512
    max_num_batched_tokens: int = 16384
    eos: int = -1
    kvcache_block_size: int = 256
    num_kvcache_blocks: int = -1



def _label(root: Path | None) -> str:
    """``nano-vllm@<short sha>``: the pin that the labs print."""
    return pinned(UPSTREAM, root).label(7)


def load_block_manager(root: Path | None = None) -> types.SimpleNamespace:
    """nano-vllm's ``BlockManager``, ``Sequence`` and ``SamplingParams`` at the pin."""
    label = _label(root)
    mods = package(UPSTREAM, BLOCK_MANAGER_FILES, root=root)
    return types.SimpleNamespace(
        label=label,
        BlockManager=mods["nanovllm.engine.block_manager"].BlockManager,
        Sequence=mods["nanovllm.engine.sequence"].Sequence,
        SamplingParams=mods["nanovllm.sampling_params"].SamplingParams,
    )


def load_scheduler(root: Path | None = None) -> types.SimpleNamespace:
    """nano-vllm's ``Scheduler`` (with its real block manager) at the pin."""
    label = _label(root)
    config = types.ModuleType("nanovllm.config")
    config.Config = SchedulerConfig  # type: ignore[attr-defined]
    mods = package(UPSTREAM, SCHEDULER_FILES, {"nanovllm.config": config}, root=root)
    return types.SimpleNamespace(
        label=label,
        Scheduler=mods["nanovllm.engine.scheduler"].Scheduler,
        Sequence=mods["nanovllm.engine.sequence"].Sequence,
        SamplingParams=mods["nanovllm.sampling_params"].SamplingParams,
        Config=SchedulerConfig,
    )


def load_linear(root: Path | None = None) -> types.ModuleType:
    """nano-vllm's tensor-parallel linear layers (``nanovllm/layers/linear.py``) at the pin."""
    return package(UPSTREAM, LINEAR_FILES, root=root)["nanovllm.layers.linear"]


def prefix_hits(
    ns: types.SimpleNamespace, trace: list, num_blocks: int, block_size: int
) -> list[int]:
    """Cached prompt tokens per request when nano-vllm's ``BlockManager`` serves ``trace``.

    ``trace`` holds ``prefix_cache.Request`` items, served one at a time as the engine would
    run them alone: ``can_allocate`` and ``allocate`` at admission, ``hash_blocks`` after the
    prefill and after each decode step (``may_append`` first), ``deallocate`` at the end.
    """
    ns.Sequence.block_size = block_size
    bm = ns.BlockManager(num_blocks, block_size)
    params = ns.SamplingParams(max_tokens=1, ignore_eos=True)
    cached: list[int] = []
    for req in trace:
        seq = ns.Sequence(list(req.prompt), params)
        hits = bm.can_allocate(seq)
        if hits == -1:
            raise ValueError(f"a prompt of {len(req.prompt)} tokens does not fit in the pool")
        bm.allocate(seq, hits)
        cached.append(seq.num_cached_tokens)
        seq.num_scheduled_tokens = seq.num_tokens - seq.num_cached_tokens
        for token in req.output:
            bm.hash_blocks(seq)
            seq.num_cached_tokens += seq.num_scheduled_tokens
            seq.append_token(token)
            if len(seq.completion_token_ids) == len(req.output):
                break
            if not bm.can_append(seq):
                raise ValueError("pool exhausted while decoding; use more blocks")
            bm.may_append(seq)
            seq.num_scheduled_tokens = 1
        bm.deallocate(seq)
    return cached


def schedule_steps(
    ns: types.SimpleNamespace,
    trace: list,
    config: SchedulerConfig,
    seed: int = 0,
    prefix_cache: bool = True,
    preempted: list[tuple[int, int]] | None = None,
) -> list[tuple[str, tuple[tuple[int, int], ...]]]:
    """The steps nano-vllm's ``Scheduler`` takes for ``trace`` (all requests queued at once).

    ``trace`` holds ``simulator.TraceRequest`` items. Prompts are distinct random tokens; the
    model is replaced by a token source that never emits EOS, so each request generates
    exactly ``output_len`` tokens. Returns, per step, its kind and (request id, new tokens).

    ``prefix_cache=False`` gives every block hash a fresh value, so that no lookup ever hits:
    the block manager then behaves as with prefix caching off, and the scheduler's own rules
    are left as they are. ``preempted``, if given, receives (step index, request id) for each
    preemption, in order.
    """
    rng = random.Random(seed)
    ns.Sequence.block_size = config.kvcache_block_size
    sched = ns.Scheduler(config)
    if not prefix_cache:
        fresh = iter(range(1 << 62, 1 << 63))
        sched.block_manager.compute_hash = lambda token_ids, prefix=-1: next(fresh)
    rid_of: dict[int, int] = {}
    steps: list[tuple[str, tuple[tuple[int, int], ...]]] = []
    if preempted is not None:
        original = sched.preempt

        def logged(seq: object) -> None:
            preempted.append((len(steps), rid_of[seq.seq_id]))  # type: ignore[attr-defined]
            original(seq)

        sched.preempt = logged
    for req in trace:
        prompt = [rng.randrange(1, 1 << 30) for _ in range(req.prompt_len)]
        seq = ns.Sequence(prompt, ns.SamplingParams(max_tokens=req.output_len, ignore_eos=True))
        rid_of[seq.seq_id] = req.rid
        sched.add(seq)
    while not sched.is_finished():
        seqs, is_prefill = sched.schedule()
        chunks = tuple((rid_of[s.seq_id], s.num_scheduled_tokens) for s in seqs)
        steps.append(("prefill" if is_prefill else "decode", chunks))
        sched.postprocess(seqs, [0] * len(seqs), is_prefill)
    return steps


# ---------------------------------------------------------------------------------------------
# ModelRunner's pure bookkeeping, run on the CPU: KV sizing and CUDA-graph buckets
# ---------------------------------------------------------------------------------------------

MODEL_RUNNER = "nanovllm/engine/model_runner.py"
RUNNER_METHODS = ("allocate_kv_cache", "capture_cudagraph", "run_model")


class _Context:
    """``set_context``/``get_context``/``reset_context`` as nano-vllm's ``utils/context.py``
    names them: one global holder of the step's attention metadata."""

    def __init__(self) -> None:
        self.current = types.SimpleNamespace()

    def set_context(self, is_prefill: bool, cu_seqlens_q: Any = None, cu_seqlens_k: Any = None,
                    max_seqlen_q: int = 0, max_seqlen_k: int = 0, slot_mapping: Any = None,
                    context_lens: Any = None, block_tables: Any = None) -> None:
        self.current = types.SimpleNamespace(
            is_prefill=is_prefill, slot_mapping=slot_mapping, context_lens=context_lens,
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
    ns: types.SimpleNamespace, model: Any, *, gpu_bytes: int, used: int, activation_peak: int,
    utilization: float, block_size: int, tp_size: int, max_num_seqs: int, max_model_len: int,
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
        hf_config=hf, gpu_memory_utilization=utilization, num_kvcache_blocks=-1,
        max_num_seqs=max_num_seqs, max_model_len=max_model_len,
    )
    hidden = model.hidden_size
    runner = types.SimpleNamespace(
        config=config, block_size=block_size, world_size=tp_size, enforce_eager=False,
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
    ns: types.SimpleNamespace, model: Any, *, gpu_bytes: int, weight_bytes: int,
    activation_peak: int = 0, utilization: float = 0.9, block_size: int = 256, tp_size: int = 1,
) -> dict[str, int]:
    """Run nano-vllm's ``allocate_kv_cache`` for ``model`` (a ``ModelConfig``) on a stand-in
    GPU of ``gpu_bytes`` on which the weights take ``weight_bytes`` and the warm-up peaked
    ``activation_peak`` above them. Returns the blocks it chose and the bytes of the KV tensor
    it allocated (on the meta device)."""
    runner, scope = _runner_self(
        ns, model, gpu_bytes=gpu_bytes, used=weight_bytes, activation_peak=activation_peak,
        utilization=utilization, block_size=block_size, tp_size=tp_size, max_num_seqs=512,
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
    ns: types.SimpleNamespace, model: Any, max_num_seqs: int, batches: list[int],
    block_size: int = 256, max_model_len: int = 4096,
) -> tuple[list[int], list[int | str | None]]:
    """Run nano-vllm's ``capture_cudagraph`` (graphs faked) and then ``run_model`` for decode
    batches of each size in ``batches``. Returns the captured batch sizes and, per batch, the
    size of the graph replayed (``None`` when ``run_model`` runs eagerly, ``"StopIteration"``
    when it finds no graph and fails)."""
    import torch

    runner, scope = _runner_self(
        ns, model, gpu_bytes=0, used=0, activation_peak=0, utilization=0.9,
        block_size=block_size, tp_size=1, max_num_seqs=max_num_seqs, max_model_len=max_model_len,
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
