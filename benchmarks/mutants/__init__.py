"""The mutations that benchmarks/mutations.py plants, one module per chapter.

Why one module per chapter: each chapter's list grows as its labs do, and a chapter adds its own
(``--chapter NAME`` runs them); the tool only needs ``MUTATIONS``, every list in one.
"""

from __future__ import annotations

from mutants import (
    agents,
    attention,
    edge,
    hpc,
    kernels,
    models,
    moe,
    multimodal,
    normalization,
    parallelism,
    post_training,
    precision,
    profiling,
    pytorch,
    serving,
    speculative,
    training,
)
from mutants.base import Mutation

CHAPTERS = (
    parallelism, serving, attention, moe, hpc, training, kernels, precision, speculative,
    post_training, pytorch, profiling, agents, models, normalization, multimodal, edge,
)  # fmt: skip
MUTATIONS: list[Mutation] = [mutation for chapter in CHAPTERS for mutation in chapter.MUTATIONS]

__all__ = ["MUTATIONS", "Mutation"]
