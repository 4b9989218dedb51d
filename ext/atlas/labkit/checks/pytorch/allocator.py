"""Checks of the labs of ``pytorch/allocator.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself, read from the
installed wheel (its C++ headers, its configuration parser) or measured on a GPU.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import torch

ROLE = "check"

_INCLUDE = Path(torch.__file__).parent / "include"


def header_constants() -> dict[str, int]:
    """The allocator's size constants, read from the C++ header the installed wheel ships."""
    header = _INCLUDE / "c10" / "core" / "AllocatorConfig.h"
    found = re.findall(r"constexpr size_t (k\w+) = (\d+);", header.read_text())
    return {name: int(value) for name, value in found}


def header_large_segment_size() -> int:
    """The default of ``large_segment_size_mb`` (bytes), as the header initialises it."""
    header = (_INCLUDE / "c10" / "core" / "AllocatorConfig.h").read_text()
    return int(re.search(r"large_segment_size_\{(\d+)\}", header).group(1))


def settings_in_effect(env: dict[str, str], trials: tuple[str, ...] = ()) -> list[str]:
    """The allocator settings a fresh process parses under ``env``, then its verdict on ``trials``.

    Runs a new interpreter (the settings are read once, when the library loads) and returns
    what PyTorch's own parser recorded, or the last line of the error it raised; then, for each
    string of ``trials`` parsed at run time in the same process, ``"accepted"`` or the first
    line of the error. One process serves all the trials, since starting one costs seconds.
    """
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith("PYTORCH_") or "ALLOC" not in k
    }
    code = (
        "import sys, torch\n"
        "print(torch._C._accelerator_getAllocatorSettings())\n"
        "for t in sys.argv[1:]:\n"
        "    try:\n"
        "        torch._C._accelerator_setAllocatorSettings(t)\n"
        "        print('accepted')\n"
        "    except (ValueError, RuntimeError) as err:\n"
        "        print(f'{type(err).__name__}: ' + str(err).splitlines()[0].strip())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *trials],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=240,
    )
    if done.returncode != 0:
        return [done.stderr.strip().splitlines()[-1]]
    return [line.strip() for line in done.stdout.strip().splitlines()]


def cuda_replay(trace: list[tuple[str, str, int]], expandable: bool = False) -> dict[str, int]:
    """Replay a trace of ``atlas.labkit.pytorch.allocator`` with real CUDA tensors.

    Returns the change of the same counters as ``allocator.replay``, read from
    ``torch.cuda.memory_stats()`` before and after: the measured side of the comparison.
    """
    from atlas.labkit.pytorch.allocator import TRACE_KEYS

    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch._C._accelerator_setAllocatorSettings(f"expandable_segments:{expandable}")
    before = torch.cuda.memory_stats()
    live: dict[str, torch.Tensor] = {}
    try:
        for op, name, nbytes in trace:
            if op == "alloc":
                live[name] = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
            else:
                del live[name]
        after = torch.cuda.memory_stats()
    finally:
        live.clear()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch._C._accelerator_setAllocatorSettings("expandable_segments:False")
    return {key: after.get(key, 0) - before.get(key, 0) for key in TRACE_KEYS}
