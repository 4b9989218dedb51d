"""Grouped GEMM: one weight matrix per expert, a different number of rows for each.

After dispatch a rank holds ``m_g`` token rows for each local expert g, sorted by expert:
``x [sum m_g, K]``, weights ``w [G, K, N]``. Four ways to compute ``y_g = x_g @ w_g``:

- :func:`loop_reference`: one matmul per expert (the definition).
- :func:`padded_bmm`: pad every group to the largest ``m_g`` and run one batched matmul.
- :func:`contiguous_layout` + :func:`contiguous_grouped_gemm`: each group's rows padded only to
  a multiple of the tile height ``block_m``, one expert id per row (``-1`` on padding rows), and
  a loop over tiles that reads a tile's expert from its first row and skips padding tiles. This
  is the layout DeepGEMM's contiguous kernels take.
- :func:`masked_grouped_gemm`: a ``[G, max_m, K]`` buffer with a count per group; only the
  tiles below each group's count are computed. This is the layout of DeepGEMM's masked kernels.

:func:`tiles` counts the ``block_m``-row tiles each layout computes.
"""

from __future__ import annotations

import math

import torch

ROLE = "taught"


def loop_reference(x: torch.Tensor, w: torch.Tensor, counts: list[int]) -> torch.Tensor:
    """``y_g = x_g @ w_g`` for the consecutive row blocks ``x_g`` of sizes ``counts``."""
    return torch.cat([xg @ w[g] for g, xg in enumerate(x.split(counts))])


def padded_bmm(x: torch.Tensor, w: torch.Tensor, counts: list[int]) -> torch.Tensor:
    """Pad each group to ``max(counts)`` rows, one ``bmm``, then drop the padding rows."""
    max_m = max(counts)
    padded = torch.stack(
        [torch.nn.functional.pad(xg, (0, 0, 0, max_m - xg.shape[0])) for xg in x.split(counts)]
    )
    y = torch.bmm(padded, w)  # [G, max_m, N]
    return torch.cat([y[g, :m] for g, m in enumerate(counts)])


def contiguous_layout(counts: list[int], block_m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Row positions of the packed rows inside the aligned buffer, and the expert id of every
    buffer row (``-1`` for padding). Group g starts at a multiple of ``block_m``."""
    positions, m_indices, start = [], [], 0
    for g, m in enumerate(counts):
        aligned = math.ceil(m / block_m) * block_m
        positions.append(torch.arange(start, start + m))
        m_indices += [g] * m + [-1] * (aligned - m)
        start += aligned
    return torch.cat(positions), torch.tensor(m_indices, dtype=torch.long)


def contiguous_grouped_gemm(
    a: torch.Tensor,
    w: torch.Tensor,
    m_indices: torch.Tensor,
    block_m: int,
    stats: dict | None = None,
) -> torch.Tensor:
    """Tile by tile over an aligned buffer ``a [M, K]``: a tile's expert is the id of its first
    row; a tile whose first row is padding is skipped and its output stays zero."""
    out = []
    for start in range(0, a.shape[0], block_m):
        tile, g = a[start : start + block_m], int(m_indices[start])
        if g < 0:
            out.append(tile.new_zeros(tile.shape[0], w.shape[2]))
            continue
        out.append(tile @ w[g])
        if stats is not None:
            stats["tiles"] = stats.get("tiles", 0) + 1
            stats["rows"] = stats.get("rows", 0) + int(
                (m_indices[start : start + block_m] >= 0).sum()
            )
    return torch.cat(out)


def masked_grouped_gemm(
    a: torch.Tensor, w: torch.Tensor, masked_m: list[int], block_m: int, stats: dict | None = None
) -> torch.Tensor:
    """``a [G, max_m, K]`` with ``masked_m[g]`` valid rows in group g: compute only the
    ``ceil(masked_m[g] / block_m)`` tiles of each group (rows past the count are garbage)."""
    out = a.new_zeros(a.shape[0], a.shape[1], w.shape[2])
    for g, m in enumerate(masked_m):
        for start in range(0, math.ceil(m / block_m) * block_m, block_m):
            out[g, start : start + block_m] = a[g, start : start + block_m] @ w[g]
            if stats is not None:
                stats["tiles"] = stats.get("tiles", 0) + 1
                stats["rows"] = stats.get("rows", 0) + min(block_m, m - start)
    return out


def tiles(counts: list[int], block_m: int, layout: str) -> int:
    """Row tiles of height ``block_m`` a layout computes (per column tile of the output).
    ``padded``: every group padded to the largest; ``contiguous`` and ``masked``: each group
    rounded up to whole tiles."""
    if layout == "padded":
        return len(counts) * math.ceil(max(counts) / block_m)
    if layout in ("contiguous", "masked"):
        return sum(math.ceil(m / block_m) for m in counts)
    raise ValueError(f"unknown layout {layout!r}")


def wasted_fraction(counts: list[int], block_m: int, layout: str) -> float:
    """Share of computed rows that are padding: ``1 - sum(m) / (block_m * tiles)``."""
    return 1 - sum(counts) / (block_m * tiles(counts, block_m, layout))


def to_contiguous(
    x: torch.Tensor, counts: list[int], block_m: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Scatter the packed rows into the aligned buffer: ``(buffer, m_indices, positions)``;
    padding rows are zero, and ``buffer[positions]`` gives the packed rows back."""
    positions, m_indices = contiguous_layout(counts, block_m)
    buffer = x.new_zeros(m_indices.numel(), x.shape[1]).index_copy(0, positions, x)
    return buffer, m_indices, positions


def to_masked(
    x: torch.Tensor, counts: list[int]
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """Scatter the packed rows into a ``[G, max_m, K]`` buffer: ``(buffer, (group, row))``,
    with ``buffer[group, row]`` giving the packed rows back."""
    group = torch.repeat_interleave(torch.arange(len(counts)), torch.tensor(counts))
    row = torch.cat([torch.arange(m) for m in counts])
    buffer = x.new_zeros(len(counts), max(counts), x.shape[1]).index_put((group, row), x)
    return buffer, (group, row)
