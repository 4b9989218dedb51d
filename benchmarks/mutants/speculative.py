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
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "spec-blocks-floor",
        "speculative",
        "speculative/engine.py",
        "        need = -(-(req.length + new_tokens) // self.block_size) - len(req.blocks)",
        "        need = (req.length + new_tokens) // self.block_size - len(req.blocks)",
        ("speculative/serving",),
        "the engine's block demand floors instead of rounding up a partial block",
    ),
    Mutation(
        "spec-keep-floor",
        "speculative",
        "speculative/engine.py",
        "        keep = -(-req.length // self.block_size)",
        "        keep = req.length // self.block_size",
        ("speculative/serving",),
        "after a rejection the engine frees the block that holds the last kept tokens",
    ),
    Mutation(
        "spec-accept-one-short",
        "speculative",
        "speculative/decode.py",
        "        while kept < len(draft) and draft[kept] == choice[kept]:",
        "        while kept < len(draft) - 1 and draft[kept] == choice[kept]:",
        ("speculative/draft-methods",),
        "greedy verification never accepts the whole draft (off by one)",
    ),
    Mutation(
        "spec-output-one-short",
        "speculative",
        "speculative/decode.py",
        "    return seq[len(prompt) : len(prompt) + max_new], stats",
        "    return seq[len(prompt) : len(prompt) + max_new - 1], stats",
        (),
        "the decoder returns one token fewer than asked",
    ),
]
