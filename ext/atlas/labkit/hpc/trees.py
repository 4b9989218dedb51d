"""The binary and double binary trees NCCL lays over ranks.

A binary tree over ranks ``0..n-1`` in which rank ``r`` sits at the level of its lowest set
bit: odd ranks are leaves, ``2, 6, 10, ...`` are one level up, and so on, like an in-order
layout of a complete binary tree. Rank 0 is the root and has one child, the largest power of
two below ``n``. Half the ranks are leaves; every interior node has at most two children.

A double binary tree adds a second tree in which the leaves of the first are interior nodes
(mirror the ranks when ``n`` is even, shift them by one when it is odd), so that each rank
sends and receives about the same amount over the two trees together: the trick that lets a
tree all-reduce reach a ring's bandwidth while keeping a logarithmic depth.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLE = "taught"


@dataclass(frozen=True)
class Node:
    """One rank's place in a tree: parent and children (-1 when absent)."""

    up: int
    down0: int
    down1: int


def btree(n: int, r: int) -> Node:
    """Rank ``r``'s parent and children in the binary tree over ``n`` ranks."""
    if r == 0:  # the root: its only child is the top interior node
        top = 1 << (n - 1).bit_length() - 1 if n > 1 else 0
        return Node(-1, -1, top if n > 1 else -1)
    low = r & -r  # the level of r is its lowest set bit
    parent = (r - low) | (low << 1)  # the node one level up on the same side
    if parent >= n:
        parent = r - low
    if low == 1:
        return Node(parent, -1, -1)
    step = low >> 1
    left = r - step  # always in range: it is below r
    right = r + step
    while right >= n and step > 1:  # no node there: descend to the nearest level that has one
        step >>= 1
        right = r + step
    return Node(parent, left, right if right < n else -1)


def dtree(n: int, r: int) -> tuple[Node, Node]:
    """Rank ``r``'s places in the two trees of a double binary tree over ``n`` ranks."""
    first = btree(n, r)
    if n % 2 == 0:  # mirror: rank r plays the role of n-1-r
        m = btree(n, n - 1 - r)
        flip = lambda x: -1 if x == -1 else n - 1 - x  # noqa: E731
        return first, Node(flip(m.up), flip(m.down0), flip(m.down1))
    s = btree(n, (r - 1) % n)  # shift: rank r plays the role of r-1
    shift = lambda x: -1 if x == -1 else (x + 1) % n  # noqa: E731
    return first, Node(shift(s.up), shift(s.down0), shift(s.down1))


def depth(n: int, tree: int = 0) -> int:
    """Edges on the longest root-to-leaf path of the first (0) or second (1) tree."""

    def below(r: int) -> int:
        node = dtree(n, r)[tree]
        kids = [c for c in (node.down0, node.down1) if c != -1]
        return 1 + max(below(c) for c in kids) if kids else 0

    root = next(r for r in range(n) if dtree(n, r)[tree].up == -1)
    return below(root)
