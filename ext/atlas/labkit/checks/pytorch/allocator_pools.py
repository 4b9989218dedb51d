"""Checks of the allocator page's labs on its backends and private pools.

Every reference here is PyTorch itself: the C++ header and the Python modules the installed
wheel ships, its own configuration parser, or (on a GPU) its allocator's counters.
"""

from __future__ import annotations

import inspect
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import torch

ROLE = "check"

_HEADER = Path(torch.__file__).parent / "include" / "c10" / "cuda" / "CUDAAllocatorConfig.h"


def header_cuda_keys() -> set[str]:
    """The keys ``CUDAAllocatorConfig::getKeys()`` registers, read from the wheel's header.

    Adjacent string literals are joined as the C++ compiler joins them: the header writes
    ``"release_lock_on_cud" "amalloc"`` so that ROCm's hipify does not rewrite ``cuda``.
    """
    text = _HEADER.read_text()
    body = re.search(r"getKeys\(\) \{.*?keys\{(.*?)\};", text, re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    return {"".join(re.findall(r'"([^"]*)"', item)) for item in body.split(",") if '"' in item}


_VALID = {
    "max_split_size_mb": "256",
    "max_non_split_rounding_mb": "64",
    "garbage_collection_threshold": "0.6",
    "roundup_power2_divisions": "[64:8,256:4,>:1]",
    "expandable_segments": "True",
    "pinned_use_background_threads": "False",
    "large_segment_size_mb": "32",
    "backend": "cudaMallocAsync",
    "per_process_memory_fraction": "0.5",
    "pinned_num_register_threads": "4",
    "release_lock_on_cudamalloc": "True",
    "maxsplit_size_mb": "256",
    "expandable_segment": "True",
}
"""A value each key accepts, for shared, CUDA and misspelt keys alike."""


def random_confs(seed: int, n: int, width: int = 3) -> list[str]:
    """``n`` settings strings of ``width`` pairs drawn at random, a third of values invalid.

    An invalid value is ``banana``, which no key accepts; which pairs carry it, and which
    keys are drawn (shared, CUDA-only or misspelt), vary from string to string.
    """
    rng = random.Random(seed)
    keys = sorted(_VALID)
    out = []
    for _ in range(n):
        chosen = rng.sample(keys, width)
        out.append(
            ",".join(f"{k}:{'banana' if rng.random() < 1 / 3 else _VALID[k]}" for k in chosen)
        )
    return out


def parameters(fn: object) -> list[str]:
    """The parameter names of ``fn`` as the wheel defines it (``self`` left out)."""
    return [p for p in inspect.signature(fn).parameters if p != "self"]


_ASYNC_PROBE = """
import json, torch
t = torch.empty(64 * 2**20, dtype=torch.uint8, device="cuda")
s = torch.cuda.memory_stats()
keys = ("allocated_bytes.all.current", "reserved_bytes.all.current",
        "segment.all.current", "allocated_bytes.large_pool.current")
print(json.dumps({"backend": torch.cuda.get_allocator_backend(), **{k: s.get(k, 0) for k in keys}}))
"""


def async_backend_stats() -> dict[str, object]:
    """A 64 MiB tensor's counters in a fresh process with ``backend:cudaMallocAsync`` (GPU)."""
    env = {k: v for k, v in os.environ.items() if "ALLOC_CONF" not in k}
    env["PYTORCH_ALLOC_CONF"] = "backend:cudaMallocAsync"
    done = subprocess.run(
        [sys.executable, "-c", _ASYNC_PROBE],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def graph_pool_reserved(shared: bool, nbytes: int = 64 * 2**20) -> int:
    """Bytes reserved by capturing two graphs whose temporary of ``nbytes`` dies in capture.

    With ``shared``, the second capture goes into the first graph's pool (``g.pool()``), as
    ``make_graphed_callables`` does; otherwise each graph gets a private pool of its own.
    """
    x = torch.ones(16, dtype=torch.uint8, device="cuda")

    def body() -> torch.Tensor:
        tmp = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        tmp.fill_(1)
        return x * tmp[:16]  # the temporary dies here; only this small output survives

    body()  # warm up outside capture: lazy kernel loading must not land in a graph
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved()
    graphs, outs = [torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()], []
    for i, g in enumerate(graphs):
        pool = graphs[0].pool() if shared and i == 1 else None
        with torch.cuda.graph(g, pool=pool):
            outs.append(body())
    torch.cuda.synchronize()
    return torch.cuda.memory_reserved() - before
