"""Mutations of the speculative chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "spec-residual-is-p",
        "speculative",
        "speculative/sampling.py",
        "    fix = torch.where(full, last_p, residual(last_p, last_q))",
        "    fix = last_p",
        ("speculative/acceptance",),
        "after a rejection the replacement is drawn from p instead of the residual",
    ),
    Mutation(
        "tree-position-index",
        "speculative",
        "speculative/tree.py",
        "    return start + torch.tensor(depths(parents), dtype=torch.long)",
        "    return start + torch.arange(len(parents), dtype=torch.long)",
        ("speculative/token-trees",),
        "a tree node's position is its index instead of its depth",
    ),
    Mutation(
        "verify-no-cumprod",
        "speculative",
        "speculative/engine.py",
        "    return match.long().cumprod(dim=1).sum(dim=1)",
        "    return match.long().sum(dim=1)",
        ("speculative/serving",),
        "verification counts every matching draft token, not the accepted prefix",
    ),
]
