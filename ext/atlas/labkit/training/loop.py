"""One training iteration in the shape of Megatron-LM's ``train_step``, on one process.

An iteration consumes one *global batch*. Each data-parallel rank sees ``global / dp`` of it,
cut into ``num_microbatches`` microbatches that go through forward and backward one after
another; the gradients of all microbatches add up in the parameters' gradient buffers
(*gradient accumulation*), and only then does the optimizer step. Dividing each microbatch's
loss by ``num_microbatches`` makes the accumulated gradient the gradient of the mean loss over
the whole batch, so the update does not depend on how the batch was cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

ROLE = "taught"

Batch = tuple[torch.Tensor, torch.Tensor]


def forward_backward(
    model: torch.nn.Module,
    microbatches: Sequence[Batch],
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    scale_loss: Callable[[torch.Tensor], torch.Tensor] = lambda loss: loss,
) -> list[float]:
    """Forward and backward over the microbatches, accumulating gradients; returns the losses.

    Each loss is divided by the number of microbatches (the mean over the batch) and passed
    through ``scale_loss`` (the loss scale of fp16 training) before backward.
    """
    n = len(microbatches)
    losses = []
    for inputs, targets in microbatches:
        loss = loss_fn(model(inputs), targets)
        scale_loss(loss / n).backward()  # gradients add up in the parameters' buffers
        losses.append(float(loss.detach()))
    return losses


def train_step(
    model: torch.nn.Module,
    optimizer: Any,
    microbatches: Sequence[Batch],
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> dict[str, Any]:
    """Zero the gradients, run forward-backward over all microbatches, step the optimizer.

    ``optimizer`` is a ``torch.optim`` optimizer or a :class:`~.mixed.MixedPrecisionAdam`, whose
    ``step`` returns ``(applied, grad_norm)``: an fp16 step whose gradients overflowed is
    skipped, and the learning-rate schedule should not advance for it.
    """
    optimizer.zero_grad()
    scale = getattr(optimizer, "scale_loss", lambda loss: loss)
    losses = forward_backward(model, microbatches, loss_fn, scale)
    result = optimizer.step()
    applied = result[0] if isinstance(result, tuple) else True
    return {"loss": sum(losses) / len(losses), "skipped": not applied}
