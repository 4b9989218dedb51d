"""CuTe's layout algebra in plain Python: layouts as functions from integers to integers.

A layout ``S:D`` pairs a shape ``S`` with a stride ``D`` of the same (possibly nested) tuple
structure. It maps a coordinate to an offset by the inner product with the strides; an integer
coordinate is first unfolded colexicographically (leftmost mode fastest). The operations below
are the ones CuTe builds tiling from: ``coalesce`` (simplify without changing the function),
``composition`` (``(A o B)(i) = A(B(i))``), ``complement`` (the layout of the elements a layout
does not reach), ``logical_divide`` (split a layout into a tile and the tiles' arrangement) and
``logical_product``. ``Swizzle`` is the XOR function CuTe composes with shared-memory layouts.

Integers stand for modes of size ``s``; tuples nest. The last flattened mode is unbounded:
an integer past the layout's size keeps counting in the last mode, as in CuTe.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

ROLE = "taught"

IntTuple = int | tuple["IntTuple", ...]


def flatten(t: IntTuple) -> tuple[int, ...]:
    """The integers of a nested tuple, left to right."""
    if isinstance(t, int):
        return (t,)
    return tuple(x for item in t for x in flatten(item))


def product(t: IntTuple) -> int:
    return prod(flatten(t))


def _unflatten(flat: list[int], like: IntTuple) -> IntTuple:
    """Rebuild ``like``'s nesting from the flat values ``flat`` (consumed from the front)."""
    if isinstance(like, int):
        return flat.pop(0)
    return tuple(_unflatten(flat, item) for item in like)


@dataclass(frozen=True)
class Layout:
    shape: IntTuple
    stride: IntTuple

    def __post_init__(self) -> None:
        if len(flatten(self.shape)) != len(flatten(self.stride)):
            raise ValueError(f"shape {self.shape} and stride {self.stride} do not match")

    def __repr__(self) -> str:
        return f"{_fmt(self.shape)}:{_fmt(self.stride)}"

    def size(self) -> int:
        return product(self.shape)

    def cosize(self) -> int:
        """One past the largest offset the layout produces."""
        return self(self.size() - 1) + 1

    def modes(self) -> list[Layout]:
        """The top-level sub-layouts (a single mode for an integral layout)."""
        if isinstance(self.shape, int):
            return [self]
        return [Layout(s, d) for s, d in zip(self.shape, self.stride, strict=True)]

    def __call__(self, *coord) -> int:
        """Offset of an integer index, or of a coordinate with one entry per top-level mode."""
        if len(coord) == 1 and isinstance(coord[0], int):
            return _index(coord[0], flatten(self.shape), flatten(self.stride))
        if len(coord) == 1:
            coord = coord[0]
        return sum(mode(c) for mode, c in zip(self.modes(), coord, strict=True))


def _index(i: int, shape: tuple[int, ...], stride: tuple[int, ...]) -> int:
    """Colexicographic unfolding of ``i`` over ``shape``, the last mode unbounded."""
    offset = 0
    for n, d in zip(shape[:-1], stride[:-1], strict=True):
        offset += (i % n) * d
        i //= n
    return offset + i * stride[-1]


def _fmt(t: IntTuple) -> str:
    if isinstance(t, int):
        return str(t)
    return "(" + ",".join(_fmt(x) for x in t) + ")"


def make_layout(*layouts: Layout) -> Layout:
    """Concatenation: the layouts become the top-level modes of one layout."""
    return Layout(tuple(a.shape for a in layouts), tuple(a.stride for a in layouts))


def _from_modes(modes: list[tuple[int, int]]) -> Layout:
    if not modes:
        return Layout(1, 0)
    if len(modes) == 1:
        return Layout(*modes[0])
    return Layout(tuple(s for s, _ in modes), tuple(d for _, d in modes))


def coalesce(a: Layout) -> Layout:
    """The same function with the fewest modes: drop size-1 modes, merge contiguous ones."""
    modes: list[tuple[int, int]] = []
    for s, d in zip(flatten(a.shape), flatten(a.stride), strict=True):
        if s == 1:
            continue
        if modes and d == modes[-1][0] * modes[-1][1]:  # next stride = size x stride
            modes[-1] = (modes[-1][0] * s, modes[-1][1])
        else:
            modes.append((s, d))
    return _from_modes(modes)


def _compose_mode(a: Layout, s: int, d: int) -> Layout:
    """``A o s:d``: every ``d``-th element of ``A`` (divide out ``d``), the first ``s`` of them
    (mod out ``s``)."""
    if s == 1:
        return Layout(1, 0)
    flat = coalesce(a)
    modes = list(zip(flatten(flat.shape), flatten(flat.stride), strict=True))
    # 1. divide out d from the left; the last mode is unbounded and absorbs what is left
    strided: list[tuple[int, int]] = []
    rest = d
    for n, r in modes[:-1]:
        if rest >= n:
            if rest % n:
                raise ValueError(f"stride divisibility: {d} against shape {flat.shape}")
            rest //= n  # this mode is stepped over entirely
        else:
            if n % rest:
                raise ValueError(f"stride divisibility: {d} against shape {flat.shape}")
            strided.append((n // rest, r * rest))
            rest = 1
    last_stride = modes[-1][1] * rest
    # 2. mod out s from the left: keep the first s elements
    kept: list[tuple[int, int]] = []
    left = s
    for n, r in strided:
        if left == 1:
            break
        if left >= n:
            if left % n:
                raise ValueError(f"shape divisibility: {s} against shape {flat.shape}")
            kept.append((n, r))
            left //= n
        else:
            if n % left:
                raise ValueError(f"shape divisibility: {s} against shape {flat.shape}")
            kept.append((left, r))
            left = 1
    if left > 1:
        kept.append((left, last_stride))
    return coalesce(_from_modes(kept))


def composition(a: Layout, b: Layout) -> Layout:
    """``A o B``: the layout ``R`` with ``R(i) = A(B(i))``, shaped like ``B``."""
    if isinstance(b.shape, int):
        return _compose_mode(a, b.shape, b.stride)
    parts = [composition(a, mode) for mode in b.modes()]
    return Layout(tuple(p.shape for p in parts), tuple(p.stride for p in parts))


def complement(a: Layout, cotarget: int) -> Layout:
    """The ordered layout of the offsets below ``cotarget`` that ``A`` does not produce.

    Sort ``A``'s modes by stride; each gap between what the modes so far cover and the next
    stride becomes a mode of the complement, and a final mode repeats the whole up to
    ``cotarget``.
    """
    pairs = zip(flatten(a.shape), flatten(a.stride), strict=True)
    modes = sorted(((s, d) for s, d in pairs if s != 1 and d != 0), key=lambda m: m[1])
    result: list[tuple[int, int]] = []
    covered = 1  # the stride the next complement mode starts at
    for s, d in modes:
        if d % covered:
            raise ValueError(f"{a} is not injective enough to have a complement")
        result.append((d // covered, covered))
        covered = s * d
    result.append((-(-cotarget // covered), covered))
    return coalesce(_from_modes(result))


def logical_divide(a: Layout, tiler: Layout) -> Layout:
    """``A / B = A o (B, B*)``: mode 0 is the tile ``B`` picks, mode 1 the tiles' arrangement."""
    return composition(a, make_layout(tiler, complement(tiler, a.size())))


def logical_product(a: Layout, b: Layout) -> Layout:
    """``A x B = (A, A* o B)``: ``A`` repeated in the arrangement ``B``."""
    return make_layout(a, composition(complement(a, a.size() * b.cosize()), b))


@dataclass(frozen=True)
class Swizzle:
    """``Swizzle<B, M, S>``: XOR ``B`` bits taken ``S`` positions above bit ``M + S`` into the
    ``B`` bits above bit ``M``. Units of ``2**M`` elements move together; rows ``S`` bits up
    choose which unit goes where."""

    bits: int
    base: int
    shift: int

    def __call__(self, offset: int) -> int:
        mask = ((1 << self.bits) - 1) << (self.base + self.shift)
        return offset ^ ((offset & mask) >> self.shift)


def composition_by_mode(a: Layout, tiler: tuple[Layout, ...]) -> Layout:
    """Compose mode ``i`` of ``A`` with ``tiler[i]`` (CuTe's tiler ``<B0, B1, ...>``)."""
    parts = [composition(mode, t) for mode, t in zip(a.modes(), tiler, strict=True)]
    return Layout(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
