"""Checks of the labs of ``pytorch/problems.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

import torch

ROLE = "check"


class SwiGLU(torch.nn.Module):
    """A Llama-style gated MLP: ``down(silu(gate(x)) * up(x))``, no biases."""

    def __init__(self, hidden: int, ffn: int, seed: int = 0) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.gate = torch.nn.Linear(hidden, ffn, bias=False)
        self.up = torch.nn.Linear(hidden, ffn, bias=False)
        self.down = torch.nn.Linear(ffn, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


def measured_saved_bytes(block: torch.nn.Module, x: torch.Tensor, checkpointed: bool) -> int:
    """Activation bytes autograd saves for ``block(x)``, counted by the saved-tensor ledger."""
    from torch.utils.checkpoint import checkpoint

    from atlas.labkit.pytorch.autograd import SavedTensorLedger

    ledger = SavedTensorLedger(block.parameters())
    with ledger:
        block(x) if not checkpointed else checkpoint(block, x, use_reentrant=False)
    return ledger.saved_bytes()


def dtensor_local_rows(rank: int, world: int, rows: int) -> int:
    """Rows of a ``rows x 4`` tensor that ``Shard(0)`` leaves on this rank of a 1-D CPU mesh."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (world,))
    return distribute_tensor(torch.zeros(rows, 4), mesh, [Shard(0)]).to_local().shape[0]


def allocate_all(sizes: list[int], expandable: bool = False) -> dict[str, int]:
    """Allocate ``sizes`` bytes one after another, all kept alive; the allocator's statistics."""
    from atlas.labkit.pytorch.allocator import CachingAllocator

    mem = CachingAllocator(expandable=expandable)
    for nbytes in sizes:
        mem.malloc(nbytes)
    return mem.stats()
