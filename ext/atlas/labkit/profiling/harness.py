"""Checks for the Profiling chapter: each compares the chapter's code with PyTorch itself.

The schedule against ``torch.profiler.schedule`` and against the traces a real profiler hands
over; the operator table against ``key_averages``; the memory replay against the allocator's
own running total in the trace and against a hand count of saved activations; the roofline
placement against ``FlopCounterMode`` and bytes counted on the real operators.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from typing import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

ACTIONS = {"NONE": "none", "WARMUP": "warmup", "RECORD": "record", "RECORD_AND_SAVE": "save"}


def torch_schedule(n_steps: int, **kw) -> list[str]:
    """The actions ``torch.profiler.schedule`` returns for steps 0 .. n_steps-1."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn = torch.profiler.schedule(**kw)
    return [ACTIONS[fn(s).name] for s in range(n_steps)]


def traces_handed_over(n_steps: int, **kw) -> list[int]:
    """Run a real profiler with a schedule for ``n_steps`` steps; the step numbers at which it
    called ``on_trace_ready``."""
    import warnings

    ready: list[int] = []
    step = {"n": 0}
    x = torch.ones(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = torch.profiler.schedule(**kw)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=sched,
                                    on_trace_ready=lambda p: ready.append(step["n"])) as prof:
            for s in range(n_steps):
                step["n"] = s
                x = x + 1
                prof.step()
    return ready


def mlp(d: int = 256, inner: int = 1024, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(d, inner), torch.nn.GELU(), torch.nn.Linear(inner, d))


@functools.lru_cache(maxsize=4)
def profile_mlp_step(tokens: int = 64, d: int = 256, inner: int = 1024):
    """Profile one forward and backward of the MLP on CPU, with memory, shapes and stacks.

    Returns ``(table, chrome_trace_dict)``: PyTorch's own aggregation (``key_averages``, read
    before the export) and the exported Chrome trace.
    """
    model = mlp(d, inner)
    x = torch.randn(tokens, d)
    acts = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=acts, profile_memory=True, record_shapes=True,
                                with_stack=True) as prof:
        with torch.profiler.record_function("forward"):
            y = model(x)
        with torch.profiler.record_function("backward"):
            y.sum().backward()
    table = key_averages_table(prof)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    return table, trace


def key_averages_table(prof) -> dict[str, tuple[int, float, float]]:
    """PyTorch's own aggregation: ``name -> (calls, total us, self us)``."""
    return {e.key: (e.count, e.cpu_time_total, e.self_cpu_time_total) for e in prof.key_averages()}


def tables_agree(ours: dict, theirs: dict, names: list[str], rel: float = 0.02, abs_us: float = 2.0) -> bool:
    for n in names:
        c1, t1, s1 = ours[n]
        c2, t2, s2 = theirs[n]
        if c1 != c2:
            return False
        for a, b in ((t1, t2), (s1, s2)):
            if abs(a - b) > max(abs_us, rel * abs(b)):
                return False
    return True


def profiled_snapshot(fn: Callable[[], object]) -> tuple[list[dict], dict]:
    """Profile ``fn`` on CPU with memory recording; return the snapshot trace that
    ``_profile_to_snapshot`` builds, and the exported Chrome trace."""
    from torch.cuda._memory_viz import _profile_to_snapshot

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True,
                                record_shapes=True, with_stack=True) as prof:
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


class ByteCounter(TorchDispatchMode):
    """Bytes every ATen operator reads and writes: the sum of its tensor inputs and outputs.
    Views (operators whose result aliases an input) move nothing and are not counted."""

    def __init__(self):
        super().__init__()
        self.total = 0
        self.ops: list[tuple[str, int]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if any(r.alias_info is not None for r in func._schema.returns):
            return out  # a view moves no bytes
        n = 0
        for t in torch.utils._pytree.tree_leaves((args, kwargs, out)):
            if isinstance(t, torch.Tensor):
                n += t.numel() * t.element_size()
        self.total += n
        self.ops.append((str(func.overloadpacket), n))
        return out


def measured_linear(tokens: int, d_in: int, d_out: int, dtype=torch.bfloat16) -> tuple[float, float]:
    """FLOPs (``FlopCounterMode``) and operator bytes of ``F.linear`` on meta tensors."""
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.empty(tokens, d_in, dtype=dtype, device="meta")
    w = torch.empty(d_out, d_in, dtype=dtype, device="meta")
    counter = ByteCounter()
    with FlopCounterMode(display=False) as fc, counter:
        torch.nn.functional.linear(x, w)
    return float(fc.get_total_flops()), float(counter.total)
