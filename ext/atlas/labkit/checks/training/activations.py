"""Checks of the labs of ``training/activations.md``.

The chapter's checks: measuring tools (saved-tensor hooks) on layers run as one rank would.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from atlas.labkit.checks.training.common import SavedBytes

ROLE = "check"


def full_recompute_rank_bytes(
    s: int, b: int, h: int, a: int, layers: int, tp: int, sp: bool, seed: int = 0
) -> int:
    """Bytes one tensor-parallel rank keeps for backward when every layer is recomputed,
    measured with saved-tensor hooks (parameters excluded).

    Each layer is wrapped in the taught checkpoint (``training/recompute.py``), so what autograd
    keeps is what the checkpoints save. Under sequence parallelism the residual stream between
    layers is split along the sequence: the rank holds its ``s / tp`` rows, each layer
    all-gathers the sequence before it runs (the other ranks' rows are stood in for by
    constants, which only their size concerns) and hands back this rank's rows. Without it,
    every rank holds all ``s`` rows. Nothing here divides by ``tp``: the bytes come from the
    tensors the checkpoints were given.
    """
    from atlas.labkit.training.recompute import build_stack, checkpoint

    if sp and s % tp:
        raise ValueError(f"a sequence of {s} does not split over {tp} ranks")
    stack = build_stack(layers, h, a, "full", seed)
    gen = torch.Generator().manual_seed(seed + 1)
    rows = s // tp if sp else s
    x = torch.randn(rows, b, h, generator=gen).to(torch.bfloat16).requires_grad_()
    others = torch.randn(s - rows, b, h, generator=gen).to(torch.bfloat16)  # other ranks' rows

    def layer_on_rank(layer: torch.nn.Module) -> Callable[[torch.Tensor], torch.Tensor]:
        def run(mine: torch.Tensor) -> torch.Tensor:
            if not sp:
                return layer(mine)
            return layer(torch.cat((mine, others)))[:rows]  # gather, run, keep our rows

        return run

    with SavedBytes(stack.parameters()) as saved:
        y = x
        for layer in stack:
            y = checkpoint(layer_on_rank(layer), y)
    y.float().pow(2).sum().backward()  # the recomputation runs: the checkpoints were usable
    return saved.total
