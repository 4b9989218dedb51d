"""Checks of the labs of ``moe/production.md``.

The chapter's checks: the upstreams' own code at the pin, and the checks.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from atlas.labkit.moe import eplb as our_eplb
from atlas.labkit.pinned import module

ROLE = "check"


def load_eplb() -> types.ModuleType:
    """EPLB's ``eplb.py`` at the pin (it imports only torch)."""
    return module("eplb", "eplb.py")


# -- EPLB ----------------------------------------------------------------------------------------
def eplb_matches_upstream(
    load: torch.Tensor, replicas: int, groups: int, nodes: int, gpus: int
) -> dict[str, Any]:
    """Our placement against EPLB's ``rebalance_experts`` at the pin, on one layer's loads.

    ``counts``: the same number of copies of every expert. ``loads``: the same load on the GPUs
    of each node, up to their order (to 1e-6 relative). EPLB sorts with ``torch.sort``, which
    may order equal weights (two copies of one expert) differently from our stable sort, and
    sums in float32, so equally good plans can put a copy on a different GPU of the same node.
    ``exact``: the same physical-to-logical map, slot by slot.
    """
    mod = load_eplb()
    theirs, _, count = mod.rebalance_experts(load.view(1, -1), replicas, groups, nodes, gpus)
    theirs = theirs[0].tolist()
    ours = our_eplb.rebalance(load, replicas, groups, nodes, gpus)
    per_gpu, per_node = replicas // gpus, gpus // nodes
    values = [float(v) for v in load]

    def node_loads(phy2log: list[int]) -> list[list[float]]:
        gpu = [
            sum(values[e] / ours.count[e] for e in phy2log[g * per_gpu : (g + 1) * per_gpu])
            for g in range(gpus)
        ]
        return [sorted(gpu[n * per_node : (n + 1) * per_node]) for n in range(nodes)]

    counts_ok = ours.count == count[0].tolist()
    loads_ok = counts_ok and all(
        abs(a - b) <= 1e-6 * max(abs(a), 1.0)
        for na, nb in zip(node_loads(ours.phy2log), node_loads(theirs), strict=True)
        for a, b in zip(na, nb, strict=True)
    )
    return {"counts": counts_ok, "loads": loads_ok, "exact": ours.phy2log == theirs}
