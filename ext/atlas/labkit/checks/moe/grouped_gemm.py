"""Checks of the labs of ``moe/grouped-gemm.md``.

The chapter's checks: the upstreams' own code at the pin, and the checks.
"""

from __future__ import annotations

from typing import Any

import torch

ROLE = "check"


def skewed_counts(total: int, groups: int, s: float, seed: int = 0) -> list[int]:
    """``total`` rows spread over ``groups`` experts by sampling a ``1 / rank**s`` law
    (``s = 0``: uniform sampling), sorted from the busiest expert down."""
    gen = torch.Generator().manual_seed(seed)
    p = 1 / torch.arange(1, groups + 1, dtype=torch.float64) ** s
    draws = torch.multinomial(p / p.sum(), total, replacement=True, generator=gen)
    return sorted(torch.bincount(draws, minlength=groups).tolist(), reverse=True)


def grouped_gemm_variants_agree(
    counts: list[int], block_m: int = 16, seed: int = 0
) -> dict[str, bool]:
    """Forward and backward of the four layouts against the per-expert loop (float64), and
    PyTorch's own ``grouped_mm`` with offsets against the loop (float32, non-empty groups)."""
    import torch.nn.functional as F

    from atlas.labkit.moe import grouped_gemm as gg

    gen = torch.Generator().manual_seed(seed)
    k, n, g = 32, 24, len(counts)
    x = torch.randn(sum(counts), k, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(g, k, n, dtype=torch.float64, generator=gen, requires_grad=True)
    dy = torch.randn(sum(counts), n, dtype=torch.float64, generator=gen)

    def run(fn: Any) -> tuple[torch.Tensor, ...]:
        y = fn(x, w)
        return (y, *torch.autograd.grad(y, (x, w), dy))

    def contiguous(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        a, m_indices, pos = gg.to_contiguous(x, counts, block_m)
        return gg.contiguous_grouped_gemm(a, w, m_indices, block_m)[pos]

    def masked(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        a, idx = gg.to_masked(x, counts)
        return gg.masked_grouped_gemm(a, w, counts, block_m)[idx]

    ref = run(lambda x, w: gg.loop_reference(x, w, counts))

    def same(other: tuple[torch.Tensor, ...], tol: float = 1e-12) -> bool:
        return all(
            torch.allclose(a, b, rtol=tol, atol=tol) for a, b in zip(ref, other, strict=True)
        )

    out = {
        "padded bmm": same(run(lambda x, w: gg.padded_bmm(x, w, counts))),
        "contiguous": same(run(contiguous)),
        "masked": same(run(masked)),
    }
    nz = [m for m in counts if m > 0]
    x32 = torch.randn(sum(nz), k, generator=gen, requires_grad=True)
    w32 = torch.randn(len(nz), k, n, generator=gen, requires_grad=True)
    dy32 = torch.randn(sum(nz), n, generator=gen)
    offs = torch.tensor(nz).cumsum(0).to(torch.int32)
    y_t = F.grouped_mm(x32, w32, offs=offs)
    y_l = gg.loop_reference(x32, w32, nz)
    grads_t = torch.autograd.grad(y_t, (x32, w32), dy32)
    grads_l = torch.autograd.grad(y_l, (x32, w32), dy32)
    out["torch grouped_mm"] = all(
        torch.allclose(a, b, rtol=1e-4, atol=1e-4)
        for a, b in zip((y_t, *grads_t), (y_l, *grads_l), strict=True)
    )
    return out
