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
]
