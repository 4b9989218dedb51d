"""A tensor's layout: sizes, strides and an offset into a flat storage, and what views do to it.

A strided tensor is three tuples over one flat buffer: element ``(i_0, ..., i_{n-1})`` lives at
``offset + sum_k i_k * stride_k``. Every view operation (slicing, selecting, transposing,
permuting, expanding, unfolding, reshaping where possible) only rewrites these numbers; the
storage is shared. This module restates those rewrites by hand, so that a lab can compare them
with what PyTorch computes, and adds the two decisions that turn a layout into a copy: whether
a shape change can be a view, and whether a matrix multiplication can read its operands where
they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

ROLE = "taught"


@dataclass(frozen=True)
class Layout:
    """Sizes, strides (in elements) and a storage offset (in elements)."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    @classmethod
    def contiguous(cls, sizes: tuple[int, ...]) -> Layout:
        return cls(tuple(sizes), contiguous_strides(sizes), 0)

    def address(self, index: tuple[int, ...]) -> int:
        """Position in the storage of the element at ``index``."""
        return self.offset + sum(i * s for i, s in zip(index, self.strides, strict=True))

    def numel(self) -> int:
        return prod(self.sizes)

    def slice(self, dim: int, start: int, stop: int, step: int = 1) -> Layout:
        """``t[..., start:stop:step, ...]`` on ``dim`` (non-negative bounds, ``step > 0``)."""
        stop = min(stop, self.sizes[dim])
        start = min(start, stop)
        length = (stop - start + step - 1) // step
        sizes, strides = list(self.sizes), list(self.strides)
        sizes[dim], strides[dim] = length, self.strides[dim] * step
        return Layout(tuple(sizes), tuple(strides), self.offset + start * self.strides[dim])

    def select(self, dim: int, index: int) -> Layout:
        """``t[..., index, ...]``: the dimension disappears, the offset moves."""
        sizes = self.sizes[:dim] + self.sizes[dim + 1 :]
        strides = self.strides[:dim] + self.strides[dim + 1 :]
        return Layout(sizes, strides, self.offset + index * self.strides[dim])

    def permute(self, dims: tuple[int, ...]) -> Layout:
        """Reorder the dimensions: sizes and strides travel together."""
        return Layout(
            tuple(self.sizes[d] for d in dims), tuple(self.strides[d] for d in dims), self.offset
        )

    def transpose(self, d0: int, d1: int) -> Layout:
        dims = list(range(len(self.sizes)))
        dims[d0], dims[d1] = dims[d1], dims[d0]
        return self.permute(tuple(dims))

    def expand(self, sizes: tuple[int, ...]) -> Layout:
        """Broadcast to ``sizes``: new leading dimensions and stretched size-1 ones get stride 0."""
        lead = len(sizes) - len(self.sizes)
        old_sizes = (1,) * lead + self.sizes
        old_strides = (0,) * lead + self.strides
        strides = tuple(
            0 if old == 1 and new != 1 else st
            for old, new, st in zip(old_sizes, sizes, old_strides, strict=True)
        )
        return Layout(tuple(sizes), strides, self.offset)

    def unfold(self, dim: int, size: int, step: int) -> Layout:
        """Sliding windows of ``size`` every ``step`` along ``dim``, as a new last dimension."""
        count = (self.sizes[dim] - size) // step + 1
        sizes, strides = list(self.sizes), list(self.strides)
        sizes[dim], strides[dim] = count, self.strides[dim] * step
        return Layout(tuple(sizes) + (size,), tuple(strides) + (self.strides[dim],), self.offset)

    def diagonal(self) -> Layout:
        """The main diagonal of the last two dimensions."""
        *batch_sizes, rows, cols = self.sizes
        *batch_strides, s_row, s_col = self.strides
        return Layout((*batch_sizes, min(rows, cols)), (*batch_strides, s_row + s_col), self.offset)


def contiguous_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides: the last dimension moves fastest."""
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def channels_last_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Strides of an ``N, C, H, W`` tensor stored as ``N, H, W, C`` (channels fastest)."""
    n, c, h, w = sizes
    return (h * w * c, 1, w * c, c)


def is_contiguous(layout: Layout) -> bool:
    """Row-major without gaps; dimensions of size 1 may carry any stride."""
    expected = 1
    for size, stride in reversed(list(zip(layout.sizes, layout.strides, strict=True))):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def view(layout: Layout, sizes: tuple[int, ...]) -> Layout | None:
    """The layout of ``t.view(sizes)``, or ``None`` when no strides can express it.

    The old dimensions (size-1 ones dropped) fall into *chunks*: runs in which each dimension
    steps over exactly the whole of the next one, ``stride[i] == stride[i+1] * size[i+1]``. A
    chunk is one contiguous stretch of elements with a known innermost stride, so the new
    dimensions that tile it can be given row-major strides starting from that stride. A view
    exists exactly when the new sizes, read left to right, multiply out to each chunk's element
    count in turn; a new dimension that would straddle two chunks needs a copy.
    """
    if prod(sizes) != layout.numel():
        raise ValueError(f"shape {sizes} has {prod(sizes)} elements, the tensor {layout.numel()}")
    if layout.numel() == 0:
        return Layout(tuple(sizes), contiguous_strides(sizes), layout.offset)
    dims = [(n, s) for n, s in zip(layout.sizes, layout.strides, strict=True) if n != 1]
    chunks: list[tuple[int, int]] = []  # (elements, innermost stride), outermost first
    for n, s in dims:
        if chunks and chunks[-1][1] == n * s:
            chunks[-1] = (chunks[-1][0] * n, s)
        else:
            chunks.append((n, s))
    strides: list[int] = [0] * len(sizes)
    new = 0
    for elements, inner in chunks:
        group, covered = [], 1
        while covered < elements:
            if new == len(sizes):
                return None
            if sizes[new] != 1:
                covered *= sizes[new]
            group.append(new)
            new += 1
        if covered != elements:
            return None
        step = inner
        for d in reversed(group):
            strides[d] = step
            step *= sizes[d]
    for d in range(len(sizes)):  # size-1 dimensions left over: any stride addresses them
        if sizes[d] == 1 and strides[d] == 0:
            strides[d] = strides[d + 1] * sizes[d + 1] if d + 1 < len(sizes) else 1
    return Layout(tuple(sizes), tuple(strides), layout.offset)


def gemm_ready(sizes: tuple[int, int], strides: tuple[int, int]) -> bool:
    """Can a BLAS GEMM read this ``rows x cols`` matrix in place?

    BLAS describes a matrix by a pointer, a transpose flag and one leading dimension: one of
    the two strides must be 1 and the other must step over at least a whole row (or column).
    Row-major ``(cols, 1)`` and its transpose ``(1, rows)`` qualify, and so does a slice of
    whole rows; a tensor whose both strides exceed 1 (every other column, say) does not.
    """
    rows, cols = sizes
    s_row, s_col = strides
    row_major = s_col == 1 and s_row >= max(1, cols)
    col_major = s_row == 1 and s_col >= max(1, rows)
    return row_major or col_major


def matmul_copies(x: Layout, weight: Layout, weight_requires_grad: bool) -> list[str]:
    """Which operands ``x @ weight`` copies before its GEMM, for ``x`` of 2 or more dimensions.

    A 2-D ``x`` goes straight to one GEMM, which copies any operand :func:`gemm_ready` rejects.
    An ``x`` of 3 or more dimensions is multiplied by a 2-D weight in one of two ways. If its
    leading dimensions fold into rows without a copy (they form one chunk), PyTorch folds them
    and calls one GEMM. If they do not (``x`` is a transposed activation, say), it folds anyway
    (copying ``x``) when the weight needs a gradient, so that the weight's gradient is one GEMM
    too; otherwise it broadcasts the weight and calls a batched GEMM, which reads each matrix of
    ``x`` in place once its batch dimensions fold into one.
    """
    copies = []
    if len(x.sizes) > 2:
        batch = x.sizes[:-1]
        folds = view(Layout(batch, x.strides[:-1], x.offset), (prod(batch),)) is not None
        if not folds and not weight_requires_grad:
            # batched GEMM over the broadcast weight: x's batch dimensions (all but the last
            # two) must still fold into one batch dimension, or x is copied
            outer = x.sizes[:-2]
            if len(outer) > 1:
                inner = Layout(outer, x.strides[:-2], x.offset)
                if view(inner, (prod(outer),)) is None:
                    copies.append("x")
            return copies
        if not folds:
            copies.append("x")  # reshape(-1, k) materialises x
            x = Layout.contiguous((prod(batch), x.sizes[-1]))
        else:
            x = Layout((prod(batch), x.sizes[-1]), (x.strides[-2], x.strides[-1]), x.offset)
    if not gemm_ready(x.sizes, x.strides):
        copies.append("x")
    if not gemm_ready(weight.sizes, weight.strides):
        copies.append("weight")
    return copies
