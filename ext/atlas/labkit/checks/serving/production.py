"""Checks of the labs of ``serving/production.md``.

The chapter's checks: the checks, traces and demos its labs run.
"""

from __future__ import annotations

import random

import torch

ROLE = "check"


def lora_matches_merged(
    tokens: int = 12,
    h_in: int = 32,
    h_out: int = 48,
    rank: int = 4,
    adapters: int = 3,
    scale: float = 2.0,
    seed: int = 0,
) -> dict[str, object]:
    """The batched multi-LoRA layer against each row multiplied by its own merged weight
    ``W + s B_i A_i``; and the FLOPs of the batched layer, counted by ``FlopCounterMode``, over
    those of the base multiply alone (every row with an adapter)."""
    from torch.utils.flop_counter import FlopCounterMode

    from atlas.labkit.serving.lora import lora_batched

    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, h_in, generator=gen, dtype=torch.float64)
    w = torch.randn(h_out, h_in, generator=gen, dtype=torch.float64)
    a = torch.randn(adapters, rank, h_in, generator=gen, dtype=torch.float64)
    b = torch.randn(adapters, h_out, rank, generator=gen, dtype=torch.float64)
    ids = torch.randint(-1, adapters, (tokens,), generator=gen)
    got = lora_batched(x, w, a, b, ids, scale)
    rows = []
    for t in range(tokens):
        merged = w if ids[t] < 0 else w + scale * b[ids[t]] @ a[ids[t]]
        rows.append(x[t] @ merged.T)
    every = torch.arange(tokens) % adapters
    with FlopCounterMode(display=False) as lora_count:
        lora_batched(x, w, a, b, every, scale)
    with FlopCounterMode(display=False) as base_count:
        x @ w.T
    return {
        "match": torch.allclose(got, torch.stack(rows), rtol=1e-10, atol=1e-10),
        "overhead": lora_count.get_total_flops() / base_count.get_total_flops() - 1,
    }


STRUCTURED_VOCAB = [
    "{",
    '{"',
    '"',
    "n",
    '"n',
    '":',
    ":",
    " ",
    ": ",
    '{"n": ',
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "12",
    "345",
    "07",
    "}",
    "7}",
    "0}",
    "a",
    "abc",
    "x",
    ",",
    "]",
    '"n":',
    'n":',
    " 1",
    "true",
    "null",
    "{}",
    "Ω",
]


def constrained_samples(count: int = 200, max_steps: int = 30, seed: int = 0) -> dict[str, object]:
    """Sample ``count`` strings token by token from a uniform "model" over
    ``STRUCTURED_VOCAB``, masked by :func:`..structured.token_masks` (stopping at the final
    state), and as many unmasked; check every string with Python's own ``re.fullmatch``."""
    import re

    from atlas.labkit.serving.structured import DEAD, FINAL, read, token_masks

    pattern = re.compile(r'\{"n": [0-9]+\}')
    rng = random.Random(seed)
    masks = token_masks(STRUCTURED_VOCAB)
    masked_out, steps = 0, 0
    outputs = []
    for _ in range(count):
        state, text = 0, ""
        for _ in range(max_steps):
            if state == FINAL:
                break
            allowed = [t for t, ok in zip(STRUCTURED_VOCAB, masks[state], strict=True) if ok]
            masked_out += len(STRUCTURED_VOCAB) - len(allowed)
            steps += 1
            token = rng.choice(allowed)
            text += token
            state = read(state, token)
            assert state != DEAD
        outputs.append((state == FINAL, text))
    free = [
        "".join(rng.choice(STRUCTURED_VOCAB) for _ in range(rng.randint(1, 8)))
        for _ in range(count)
    ]
    finished = [text for done, text in outputs if done]
    return {
        "finished": len(finished),
        "all_match": all(pattern.fullmatch(text) for text in finished),
        "unmasked_match": sum(1 for text in free if pattern.fullmatch(text)),
        "masked_share": round(masked_out / (steps * len(STRUCTURED_VOCAB)), 2),
        "example": finished[0] if finished else "",
    }
