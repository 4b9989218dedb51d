"""Checks of the labs of ``profiling/torch-profiler.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile

import torch

from atlas.labkit.checks.profiling.common import mlp

ROLE = "check"


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
        with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU],
            schedule=sched,
            on_trace_ready=lambda p: ready.append(step["n"]),
        ) as prof:
            for s in range(n_steps):
                step["n"] = s
                x = x + 1
                prof.step()
    return ready


@functools.lru_cache(maxsize=4)
def profile_mlp_step(tokens: int = 64, d: int = 256, inner: int = 1024):
    """Profile one forward and backward of the MLP on CPU, with memory, shapes and stacks.

    Returns ``(table, chrome_trace_dict)``: PyTorch's own aggregation (``key_averages``, read
    before the export) and the exported Chrome trace.
    """
    model = mlp(d, inner)
    x = torch.randn(tokens, d)
    acts = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(
        activities=acts, profile_memory=True, record_shapes=True, with_stack=True
    ) as prof:
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


def tables_agree(
    ours: dict, theirs: dict, names: list[str], rel: float = 0.02, abs_us: float = 2.0
) -> bool:
    for n in names:
        c1, t1, s1 = ours[n]
        c2, t2, s2 = theirs[n]
        if c1 != c2:
            return False
        for a, b in ((t1, t2), (s1, s2)):
            if abs(a - b) > max(abs_us, rel * abs(b)):
                return False
    return True
