"""Residual stacks in plain torch: Post-LN and Pre-LN placement, and Hyper-Connections."""

from __future__ import annotations

import torch
from torch import nn

ROLE = "taught"


class Block(nn.Module):
    """One residual sublayer: a two-matrix MLP F, with LayerNorm placed after the add (Post-LN,
    the original Transformer) or before F on the branch only (Pre-LN)."""

    def __init__(self, width: int, placement: str):
        super().__init__()
        self.placement = placement
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)
        for linear in (self.fc1, self.fc2):  # Xavier initialisation, as in Xiong et al.
            nn.init.xavier_normal_(linear.weight)
            nn.init.zeros_(linear.bias)

    def branch(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.placement == "post":
            return self.norm(x + self.branch(x))  # Post-LN: x_{l+1} = LN(x_l + F(x_l))
        return x + self.branch(self.norm(x))  # Pre-LN: x_{l+1} = x_l + F(LN(x_l))


class Stack(nn.Module):
    """``depth`` blocks; Pre-LN stacks end with a final LayerNorm, as GPT-2 and Llama do."""

    def __init__(self, width: int, depth: int, placement: str):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width, placement) for _ in range(depth))
        self.final = nn.LayerNorm(width) if placement == "pre" else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.final(x)


def grad_norms_per_layer(stack: Stack, x: torch.Tensor, target: torch.Tensor) -> list[float]:
    """Gradient norm of each block's output matrix (fc2) under a squared-error loss."""
    stack.zero_grad()
    loss = (stack(x) - target).pow(2).mean()
    loss.backward()
    return [b.fc2.weight.grad.norm().item() for b in stack.blocks]


class HyperConnection(nn.Module):
    """A static Hyper-Connections wrapper around one sublayer ``layer`` with ``n`` streams.

    The hidden state is a matrix H of n streams, each of the model width. The sublayer reads a
    weighted sum of the streams (``read``, n weights), its output is written back to every
    stream with weights ``write`` (n), and the streams mix among themselves through ``mix``
    (n x n):  H' = mix^T H + write^T layer(read^T H).  With n = 1 and all weights 1 this is
    the plain residual x + layer(x).
    """

    def __init__(self, layer: nn.Module, n: int, index: int = 0):
        super().__init__()
        self.layer = layer
        self.n = n
        read = torch.zeros(n)
        read[index % n] = 1.0  # layer l starts by reading stream l mod n
        self.read = nn.Parameter(read)
        self.mix = nn.Parameter(torch.eye(n))
        self.write = nn.Parameter(torch.ones(n))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        # h: [n, tokens, width]
        x = torch.einsum("n,ntd->td", self.read, h)
        y = self.layer(x)
        return torch.einsum("nm,ntd->mtd", self.mix, h) + self.write[:, None, None] * y


def sinkhorn(logits: torch.Tensor, iters: int = 20) -> torch.Tensor:
    """Project a square matrix of logits onto (nearly) the doubly stochastic matrices by
    alternately normalising rows and columns of exp(logits) (Sinkhorn-Knopp), the constraint
    manifold-constrained hyper-connections put on the stream-mixing matrix."""
    m = logits.exp()
    for _ in range(iters):
        m = m / m.sum(dim=-1, keepdim=True)
        m = m / m.sum(dim=-2, keepdim=True)
    return m
