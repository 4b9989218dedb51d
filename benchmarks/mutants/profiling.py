"""Mutations of the profiling chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "replay-ignores-free-completed",
        "profiling",
        "profiling/memory.py",
        '        elif e["action"] == "free_completed":',
        '        elif e["action"] == "free_complete":',
        ("profiling/memory",),
        "the snapshot replay misspells the action and so ignores free_completed (nothing is freed)",
    ),
    Mutation(
        "roofline-verdict-inverted",
        "profiling",
        "profiling/roofline.py",
        '    bound = "memory" if intensity < ridge else "compute"',
        '    bound = "compute" if intensity < ridge else "memory"',
        ("profiling/nsight",),
        "the roofline verdict is inverted (below the ridge called compute-bound)",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "schedule-save-early",
        "profiling",
        "profiling/trace.py",
        '    return "save" if pos == cycle - 1 else "record"',
        '    return "save" if pos == cycle - 2 else "record"',
        ("profiling/torch-profiler",),
        "the profiler schedule saves one step before the active window ends",
    ),
    Mutation(
        "schedule-skip-one-more",
        "profiling",
        "profiling/trace.py",
        "    if step < skip_first:",
        "    if step <= skip_first:",
        ("profiling/torch-profiler",),
        "skip_first skips one step too many",
    ),
    Mutation(
        "self-time-is-total",
        "profiling",
        "profiling/trace.py",
        "        return self.dur - sum(c.dur for c in self.children)",
        "        return self.dur",
        ("profiling/torch-profiler",),
        "an event's self time includes its children",
    ),
    Mutation(
        "nesting-strict-end",
        "profiling",
        "profiling/trace.py",
        "            while stack and stack[-1].end <= ev.start:",
        "            while stack and stack[-1].end < ev.start:",
        ("profiling/torch-profiler",),
        "an event that starts where its predecessor ends is nested inside it",
    ),
    # --- the Nsight Compute page (issue 38) ---
    Mutation(
        "dependency-skips-next",
        "profiling",
        "profiling/stalls.py",
        "        later = (j for j, i in enumerate(body[k + 1 :]) if regs & _registers(i.operands))",
        "        later = (j for j, i in enumerate(body[k + 2 :]) if regs & _registers(i.operands))",
        ("profiling/ncu-metrics",),
        "a load's consumer is searched from the second instruction after it, skipping the first",
    ),
    Mutation(
        "load-width-ignored",
        "profiling",
        "profiling/stalls.py",
        '    width = next((_WIDTH[m] for m in load.opcode.split(".") if m in _WIDTH), 1)',
        "    width = 1",
        ("profiling/ncu-metrics",),
        "a 128-bit load writes one register, so its consumers of the other three are missed",
    ),
    Mutation(
        "not-selected-counts-selected",
        "profiling",
        "profiling/scheduler.py",
        '            states["not_selected"] += len(eligible) - 1',
        '            states["not_selected"] += len(eligible)',
        ("profiling/ncu-metrics",),
        "the issuing warp is counted as not selected too, so the states overcount the warp-cycles",
    ),
    Mutation(
        "exposed-sweep-skips-touching",
        "profiling",
        "profiling/overlap.py",
        "        while j < len(b) and b[j][1] <= start:",
        "        while j < len(b) and b[j][0] <= start:",
        ("profiling/nsight",),
        "the sweep drops a compute interval that started before the communication, losing its overlap",
    ),
]
