"""Checks of the labs of ``pytorch/autograd.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

import torch

ROLE = "check"


def executed_nodes(output: torch.Tensor) -> set[str]:
    """Names of the nodes the engine actually runs in ``output.backward()`` (pre-hooks fire)."""
    from atlas.labkit.pytorch.autograd import graph_nodes  # noqa: F401  (same graph)

    ran: set[str] = set()
    handles, stack, seen = [], [output.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        handles.append(node.register_prehook(lambda g, n=node: ran.add(n.name())))
        stack.extend(nxt for nxt, _ in node.next_functions)
    output.backward()
    for h in handles:
        h.remove()
    return ran


def plain_rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm as three lines of tensor code, differentiated by autograd."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def mlp_block(hidden: int, ffn: int, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(hidden, ffn), torch.nn.GELU(), torch.nn.Linear(ffn, hidden)
    )
