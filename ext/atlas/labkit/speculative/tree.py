"""Token trees: several drafted continuations that share prefixes, verified in one pass.

Node 0 is the root: the last token already chosen, whose key and value are not in the cache
yet (it goes through the target together with the drafts, as in EAGLE). Every other node
``i`` holds one drafted token and the index of its parent, ``parents[i] < i``. A node may see
the cached context, itself and its ancestors; it sits at position ``start + depth``.
"""

from __future__ import annotations

import torch

ROLE = "taught"


def tree_mask(parents: list[int]) -> torch.Tensor:
    """``mask[i, j]`` is True when node ``j`` is node ``i`` or one of its ancestors."""
    n = len(parents)
    mask = torch.eye(n, dtype=torch.bool)
    for i in range(1, n):
        mask[i] |= mask[parents[i]]  # parents come first, so their rows are complete
    return mask


def depths(parents: list[int]) -> list[int]:
    d = [0] * len(parents)
    for i in range(1, len(parents)):
        d[i] = d[parents[i]] + 1
    return d


def tree_positions(parents: list[int], start: int) -> torch.Tensor:
    """Position of each node: the root at ``start``, a node at depth ``k`` at ``start + k``.
    Siblings share a position, as they are alternatives for the same slot of the text."""
    return start + torch.tensor(depths(parents), dtype=torch.long)


def tree_paths(parents: list[int]) -> list[list[int]]:
    """Every root-to-leaf path as a list of node indices (EAGLE's ``retrieve_indices``)."""
    has_child = set(parents[1:])
    paths = []
    for leaf in range(len(parents)):
        if leaf in has_child:
            continue
        path = [leaf]
        while path[-1] != 0:
            path.append(parents[path[-1]])
        paths.append(path[::-1])
    return paths


def from_choices(choices: list[list[int]]) -> list[int]:
    """Parents of the tree that a Medusa/EAGLE choice list describes. Each choice is a path of
    top-k ranks (``[0, 2]``: the third candidate after the first); nodes are numbered after
    the root in order of depth, then of the path, as the upstream buffers are."""
    ordered = sorted(choices, key=lambda c: (len(c), c))
    index = {(): 0} | {tuple(c): i + 1 for i, c in enumerate(ordered)}
    return [-1] + [index[tuple(c[:-1])] for c in ordered]


def greedy_accept(
    tokens: list[int], parents: list[int], target_next: list[int]
) -> tuple[list[int], int]:
    """Walk down the tree from the root while the target agrees.

    ``target_next[i]`` is the target's greedy token after node ``i`` (from the one tree pass).
    At each node, move to the child whose token is that prediction, if any. Returns the
    accepted node indices (root first) and the bonus token: the target's prediction after the
    last accepted node, which is correct by construction.
    """
    children: dict[int, list[int]] = {}
    for i in range(1, len(parents)):
        children.setdefault(parents[i], []).append(i)
    path = [0]
    while True:
        want = target_next[path[-1]]
        nxt = [c for c in children.get(path[-1], []) if tokens[c] == want]
        if not nxt:
            return path, want
        path.append(nxt[0])


def kv_rows_written(parents: list[int]) -> int:
    """Rows of keys and values the verification pass writes per layer: one per node."""
    return len(parents)
