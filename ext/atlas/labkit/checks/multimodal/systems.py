"""Checks of the labs of ``multimodal/systems.md``.

The chapter's checks: Checks of the multimodal chapter's labs, and loaders of Megatron-LM's code
at its pin: ``get_num_image_embeddings`` (clip_vit_model.py),
``MimoModel.align_embeddings_by_token_positions`` (mimo/model/base.py, run as a plain function)
and ``greedy_knapsack`` (examples/multimodal).
"""

from __future__ import annotations

import bisect
import functools
import random

from atlas.labkit.multimodal.packing import balance, imbalance, pack_greedy
from atlas.labkit.pinned import definitions

ROLE = "check"


@functools.cache
def megatron_greedy_knapsack():
    scope = definitions(
        "megatron",
        "examples/multimodal/dataset_helpers.py",
        ("search_for_fit", "greedy_knapsack"),
        {"bisect": bisect, "List": list},
    )
    return scope["greedy_knapsack"]


def sample_lengths(n: int = 512, seed: int = 0) -> list[int]:
    """Lengths of multimodal samples: text of 50 to 600 tokens plus 0 to 4 images of 256 to
    1,280 tokens each (seeded)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        text = rng.randint(50, 600)
        images = sum(rng.choice((256, 576, 1024, 1280)) for _ in range(rng.randint(0, 4)))
        out.append(text + images)
    return out


def packing_report(capacity: int = 8192, ranks: int = 8, seed: int = 0) -> dict:
    """Pack seeded samples with ours and with Megatron's ``greedy_knapsack``; then place the packs
    on ranks round-robin and by LPT; report pack counts and imbalances (tokens, and tokens squared
    summed per sample for the attention term), and LPT run on the squared lengths themselves."""
    lengths = sample_lengths(seed=seed)
    ours = pack_greedy(lengths, capacity)
    theirs = megatron_greedy_knapsack()(lengths, lengths, capacity)
    batch = lengths[: 8 * ranks]  # one global batch of unpacked samples, 8 per rank
    rr = [batch[r::ranks] for r in range(ranks)]
    lpt = balance(batch, ranks)
    squares = [n * n for n in batch]
    return {
        "same_packs": sorted(map(sorted, ours)) == sorted(map(sorted, theirs)),
        "packs": len(ours),
        "fill": sum(lengths) / (len(ours) * capacity),
        "round_robin": imbalance(rr),
        "lpt": imbalance(lpt),
        "lpt_bound": 1 + max(batch) / (sum(batch) / ranks),
        "lpt_square": imbalance(lpt, cost=lambda n: n * n),
        # LPT run on the quadratic cost itself, scored on it, and its own bound
        "lpt_on_square": imbalance(balance(squares, ranks)),
        "lpt_on_square_bound": 1 + max(squares) / (sum(squares) / ranks),
        "round_robin_square": imbalance(rr, cost=lambda n: n * n),
    }
