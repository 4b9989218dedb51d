"""Checks of the labs of ``kernels/overlap.md``.

The chapter's checks: memory traces, upstream kernels at their pins, references.
"""

from __future__ import annotations

import torch

ROLE = "check"


def pipeline_formula(n: int, comm: float, compute: float) -> float:
    """Makespan of ``n`` equal chunks on two engines: fill, ``n - 1`` steady steps, drain."""
    return comm + (n - 1) * max(comm, compute) + compute


def ring_gemms_match(world: int = 4, rows: int = 6, k: int = 8, n: int = 5, seed: int = 0):
    """Run ``ag_matmul`` and ``matmul_rs`` on ``world`` gloo ranks and compare with dense GEMMs.

    Returns ``(all_gather_ok, reduce_scatter_ok)``: each rank's result against the same product
    computed on one process from the full tensors.
    """
    from atlas.labkit import run_ranks
    from atlas.labkit.kernels.overlap import ag_matmul, matmul_rs

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(world * rows, k * world, generator=g, dtype=torch.float64)
    w = torch.randn(k * world, n, generator=g, dtype=torch.float64)

    def body(rank, size):
        ag = ag_matmul(x[rank * rows : (rank + 1) * rows], w)
        rs = matmul_rs(x[:, rank * k : (rank + 1) * k], w[rank * k : (rank + 1) * k])
        return ag, rs

    results = run_ranks(body, world)
    dense = x @ w
    ag_ok = all(torch.allclose(ag, dense) for ag, _ in results)
    rs_ok = all(
        torch.allclose(rs, dense[r * rows : (r + 1) * rows]) for r, (_, rs) in enumerate(results)
    )
    return ag_ok, rs_ok
