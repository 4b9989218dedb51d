"""Checks of the labs of ``profiling/memory.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable

import torch

ROLE = "check"


def profiled_snapshot(fn: Callable[[], object]) -> tuple[list[dict], dict]:
    """Profile ``fn`` on CPU with memory recording; return the snapshot trace that
    ``_profile_to_snapshot`` builds, and the exported Chrome trace."""
    from torch.cuda._memory_viz import _profile_to_snapshot

    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        profile_memory=True,
        record_shapes=True,
        with_stack=True,
    ) as prof:
        fn()
    snap = _profile_to_snapshot(prof)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    return snap["device_traces"][-1], trace


def allocator_peak(trace: dict) -> int:
    """The peak of the allocator's own running total (``Total Allocated`` on each ``[memory]``
    event), above its value before the first recorded event."""
    mem = [e["args"] for e in trace["traceEvents"] if e.get("name") == "[memory]"]
    mem.sort(key=lambda a: a["Ev Idx"])
    if not mem:
        return 0
    base = mem[0]["Total Allocated"] - mem[0]["Bytes"]
    return max(a["Total Allocated"] for a in mem) - base
