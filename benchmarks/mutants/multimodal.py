"""Mutations of the multimodal chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "merge-not-squared",
        "multimodal",
        "multimodal/tokens.py",
        "    return patches // (merge * merge) + cls",
        "    return patches // merge + cls",
        ("multimodal/index",),
        "image_tokens divides by the merge factor once instead of its square",
    ),
    Mutation(
        "lpt-most-loaded",
        "multimodal",
        "multimodal/packing.py",
        "        r = totals.index(min(totals))",
        "        r = totals.index(max(totals))",
        ("multimodal/systems",),
        "LPT places the next item on the most-loaded rank",
    ),
    Mutation(
        "encoder-cache-by-id",
        "multimodal",
        "multimodal/cache.py",
        "        return hashlib.sha256(image.contiguous().numpy().tobytes()).hexdigest()",
        "        return str(id(image))",
        ("multimodal/systems",),
        "the encoder cache is keyed by object id instead of the pixels' hash",
    ),
]
