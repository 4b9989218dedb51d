"""Run nano-vllm's own pure-Python engine parts, read from its git objects at the pin.

Nothing of nano-vllm is copied into this repository: the modules are read through
``atlas.upstream``'s object store at the pinned commit and executed in memory, under their
own names, so tracebacks point at ``nano-vllm@<sha>/nanovllm/...``. When the objects are
absent (no ``make upstreams`` yet, a CI without network) the loader raises
``UpstreamUnavailable`` and ``load_or_skip`` prints one visible skip line instead.

``scheduler.py`` imports ``nanovllm.config``, whose module body loads a Hugging Face config
through ``transformers``. The scheduler reads only five fields of it, so for the scheduler
this loader supplies ``nanovllm.config.Config`` as a plain dataclass with those fields and
runs the real ``sampling_params``, ``sequence``, ``block_manager`` and ``scheduler`` modules.
"""

from __future__ import annotations

import random
import sys
import types
import unittest
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import atlas

UPSTREAM = "nano-vllm"
BLOCK_MANAGER_FILES = (
    "nanovllm/sampling_params.py",
    "nanovllm/engine/sequence.py",
    "nanovllm/engine/block_manager.py",
)
SCHEDULER_FILES = BLOCK_MANAGER_FILES + ("nanovllm/engine/scheduler.py",)
LINEAR_FILES = ("nanovllm/layers/linear.py",)


class UpstreamUnavailable(unittest.SkipTest):
    """nano-vllm's objects at the pin cannot be read here; the message says how to get them.

    A ``unittest.SkipTest``, so a runner that honours it (pytest does) skips instead of failing.
    """


@dataclass
class SchedulerConfig:
    """The fields of nano-vllm's ``Config`` that its ``Scheduler.__init__`` reads."""

    max_num_seqs: int = 512
    max_num_batched_tokens: int = 16384
    eos: int = -1
    kvcache_block_size: int = 256
    num_kvcache_blocks: int = -1


def book_root() -> Path:
    """The book repository that holds the upstream registry (ext/atlas/.. /..)."""
    return Path(atlas.__file__).resolve().parents[2]


def _module_name(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


@contextmanager
def _registered(modules: dict[str, types.ModuleType]) -> Iterator[None]:
    """Make ``modules`` importable by name while they execute, then restore sys.modules."""
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def exec_modules(
    read: Callable[[str], bytes],
    files: tuple[str, ...],
    label: str,
    extra: dict[str, types.ModuleType] | None = None,
) -> dict[str, types.ModuleType]:
    """Execute ``files`` (in dependency order) as a package tree read through ``read(path)``.

    Parent packages are created empty; ``extra`` modules (by dotted name) are importable
    while the files run. Returns every module by dotted name.
    """
    modules: dict[str, types.ModuleType] = dict(extra or {})
    for path in files:
        parts = _module_name(path).split(".")
        for i in range(1, len(parts)):
            pkg = ".".join(parts[:i])
            if pkg not in modules:
                package = types.ModuleType(pkg)
                package.__path__ = []
                modules[pkg] = package
    sources = {path: read(path) for path in files}  # read all first: fail before executing
    for path in files:
        module = types.ModuleType(_module_name(path))
        module.__file__ = f"{label}/{path}"
        modules[module.__name__] = module
    with _registered(modules):
        for path in files:
            module = modules[_module_name(path)]
            exec(compile(sources[path], module.__file__, "exec"), module.__dict__)
            parent, _, leaf = module.__name__.rpartition(".")
            setattr(modules[parent], leaf, module)
    return modules


def _reader(root: Path | None) -> tuple[Callable[[str], bytes], str]:
    """A blob reader for nano-vllm at its pin, and the label ``nano-vllm@<short sha>``."""
    try:
        from atlas.upstream.gitstore import MissingObject, store_for
        from atlas.upstream.registry import load_registry, object_store
    except ImportError as exc:  # the upstream feature is not installed in this checkout
        raise UpstreamUnavailable(f"atlas.upstream is unavailable ({exc})") from exc
    root = root or book_root()
    upstream = load_registry(root).get(UPSTREAM)
    if upstream is None or upstream.pin is None:
        raise UpstreamUnavailable(f"{UPSTREAM} is not registered with a pin in {root}")
    git_dir = object_store(root, upstream)
    if git_dir is None:
        raise UpstreamUnavailable(f"no object store for {UPSTREAM}; run `make upstreams`")
    store = store_for(git_dir)
    pin = upstream.pin

    def read(path: str) -> bytes:
        try:
            return store.read_blob(pin, path)
        except (MissingObject, FileNotFoundError) as exc:
            raise UpstreamUnavailable(f"{UPSTREAM}@{pin[:7]} {path}: {exc}") from exc

    return read, f"{UPSTREAM}@{pin[:7]}"


def load_block_manager(root: Path | None = None) -> types.SimpleNamespace:
    """nano-vllm's ``BlockManager``, ``Sequence`` and ``SamplingParams`` at the pin."""
    read, label = _reader(root)
    mods = exec_modules(read, BLOCK_MANAGER_FILES, label)
    return types.SimpleNamespace(
        label=label,
        BlockManager=mods["nanovllm.engine.block_manager"].BlockManager,
        Sequence=mods["nanovllm.engine.sequence"].Sequence,
        SamplingParams=mods["nanovllm.sampling_params"].SamplingParams,
    )


def load_scheduler(root: Path | None = None) -> types.SimpleNamespace:
    """nano-vllm's ``Scheduler`` (with its real block manager) at the pin."""
    read, label = _reader(root)
    config = types.ModuleType("nanovllm.config")
    config.Config = SchedulerConfig  # type: ignore[attr-defined]
    mods = exec_modules(read, SCHEDULER_FILES, label, extra={"nanovllm.config": config})
    return types.SimpleNamespace(
        label=label,
        Scheduler=mods["nanovllm.engine.scheduler"].Scheduler,
        Sequence=mods["nanovllm.engine.sequence"].Sequence,
        SamplingParams=mods["nanovllm.sampling_params"].SamplingParams,
        Config=SchedulerConfig,
    )


def load_linear(root: Path | None = None) -> types.ModuleType:
    """nano-vllm's tensor-parallel linear layers (``nanovllm/layers/linear.py``) at the pin."""
    read, label = _reader(root)
    return exec_modules(read, LINEAR_FILES, label)["nanovllm.layers.linear"]


def load_or_skip(loader: Callable[[], types.SimpleNamespace]) -> types.SimpleNamespace | None:
    """Call ``loader``; on missing objects print one ``SKIPPED: ...`` line and return None."""
    try:
        return loader()
    except UpstreamUnavailable as exc:
        print(f"SKIPPED: nano-vllm at its pin is not available here: {exc}")
        return None


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
    ns: types.SimpleNamespace, trace: list, config: SchedulerConfig, seed: int = 0
) -> list[tuple[str, tuple[tuple[int, int], ...]]]:
    """The steps nano-vllm's ``Scheduler`` takes for ``trace`` (all requests queued at once).

    ``trace`` holds ``simulator.TraceRequest`` items. Prompts are distinct random tokens; the
    model is replaced by a token source that never emits EOS, so each request generates
    exactly ``output_len`` tokens. Returns, per step, its kind and (request id, new tokens).
    """
    rng = random.Random(seed)
    ns.Sequence.block_size = config.kvcache_block_size
    sched = ns.Scheduler(config)
    rid_of: dict[int, int] = {}
    for req in trace:
        prompt = [rng.randrange(1, 1 << 30) for _ in range(req.prompt_len)]
        seq = ns.Sequence(prompt, ns.SamplingParams(max_tokens=req.output_len, ignore_eos=True))
        rid_of[seq.seq_id] = req.rid
        sched.add(seq)
    steps = []
    while not sched.is_finished():
        seqs, is_prefill = sched.schedule()
        chunks = tuple((rid_of[s.seq_id], s.num_scheduled_tokens) for s in seqs)
        steps.append(("prefill" if is_prefill else "decode", chunks))
        sched.postprocess(seqs, [0] * len(seqs), is_prefill)
    return steps
