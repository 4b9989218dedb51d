"""Checking code that several pages of the multimodal chapter share: ``multimodal/problems.md``,
``multimodal/systems.md``.

The chapter's checks: Checks of the multimodal chapter's labs, and loaders of Megatron-LM's code
at its pin: ``get_num_image_embeddings`` (clip_vit_model.py),
``MimoModel.align_embeddings_by_token_positions`` (mimo/model/base.py, run as a plain function)
and ``greedy_knapsack`` (examples/multimodal).
"""

from __future__ import annotations

import random

import torch

from atlas.labkit.multimodal.cache import EncoderCache

ROLE = "check"


def cache_report(
    requests: int = 200, distinct: int = 40, capacity: int = 64, seed: int = 0
) -> dict:
    """A stream of requests drawing images from ``distinct`` images (Zipf-like), through an
    encoder wrapped with a call counter, cached and uncached."""
    rng = random.Random(seed)
    torch.manual_seed(seed)
    images = [torch.rand(3, 28, 28) for _ in range(distinct)]
    weights = [1 / (i + 1) for i in range(distinct)]
    stream = rng.choices(range(distinct), weights=weights, k=requests)
    calls = {"n": 0}
    proj = torch.randn(3 * 28 * 28, 8)

    def encode(img):
        calls["n"] += 1
        return img.flatten() @ proj

    cache = EncoderCache(encode, capacity)
    outs = [cache(images[i].clone()) for i in stream]
    same = all(
        torch.equal(o, images[i].flatten() @ proj) for o, i in zip(outs, stream, strict=True)
    )
    return {
        "calls": calls["n"],
        "unique": len(set(stream)),
        "hits": cache.hits,
        "requests": requests,
        "outputs_equal": same,
    }
