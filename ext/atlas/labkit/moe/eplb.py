"""Expert-parallel load balancing: replicate the hot experts, then pack the copies onto GPUs.

Given the recent load of each logical expert (tokens it received), a deployment has a fixed
number of physical expert slots, more than the experts. Two greedy steps fill them:

1. :func:`replicate`: give each extra slot to the expert whose load per copy is highest, so
   that the heaviest single copy is as light as possible. A token for an expert with c copies
   goes to one of them, so each copy carries ``load / c``.
2. :func:`pack`: place the copies on GPUs, the same number on each, heaviest first, each onto
   the GPU with the least load so far that still has a free slot.

:func:`rebalance` does this hierarchically when the expert groups divide evenly over the nodes
(groups packed onto nodes first, so a group's experts stay on one node, then replication and
packing inside each node), and globally otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

ROLE = "taught"


def replicate(load: list[float], slots: int) -> tuple[list[int], list[int]]:
    """Physical slot -> logical expert (the first ``len(load)`` slots hold one copy each), and
    copies per expert. Each extra slot goes to the expert with the largest ``load / copies``."""
    n = len(load)
    phy2log, count = list(range(n)), [1] * n
    for _ in range(slots - n):
        e = max(range(n), key=lambda i: (load[i] / count[i], -i))
        phy2log.append(e)
        count[e] += 1
    return phy2log, count


def pack(weights: list[float], packs: int) -> tuple[list[int], list[int]]:
    """Put ``len(weights)`` items into ``packs`` packs of equal item count: heaviest first,
    each into the lightest pack with room. Returns each item's pack and its place in it."""
    per = len(weights) // packs
    if per == 1:
        return list(range(len(weights))), [0] * len(weights)
    total, items = [0.0] * packs, [0] * packs
    pack_of, place = [-1] * len(weights), [-1] * len(weights)
    for i in sorted(range(len(weights)), key=lambda i: -weights[i]):
        p = min((p for p in range(packs) if items[p] < per), key=lambda p: (total[p], p))
        pack_of[i], place[i] = p, items[p]
        total[p] += weights[i]
        items[p] += 1
    return pack_of, place


@dataclass
class Placement:
    phy2log: list[int]  # physical slot (GPU by GPU) -> logical expert
    count: list[int]  # copies of each logical expert
    gpu_load: list[float]  # load each GPU carries


def rebalance(
    load: torch.Tensor | list[float], replicas: int, groups: int, nodes: int, gpus: int
) -> Placement:
    """Replicate and place ``len(load)`` experts into ``replicas`` slots on ``gpus`` GPUs."""
    load = [float(v) for v in load]
    n = len(load)
    if groups % nodes:  # the global policy: one group, one node
        groups, nodes = 1, 1
    group_size, per_node_log = n // groups, n // nodes
    slots_per_node, slots_per_gpu = replicas // nodes, replicas // gpus
    # 1. groups onto nodes; experts renumbered node by node ("node-major" ids)
    group_load = [sum(load[g * group_size : (g + 1) * group_size]) for g in range(groups)]
    node_of, place = pack(group_load, nodes)
    groups_per_node = groups // nodes
    major = [0] * n  # node-major id -> logical expert
    for g in range(groups):
        first = (node_of[g] * groups_per_node + place[g]) * group_size
        for j in range(group_size):
            major[first + j] = g * group_size + j
    phy2log = [0] * replicas
    for node in range(nodes):
        # 2. replicate inside the node
        logs = major[node * per_node_log : (node + 1) * per_node_log]
        node_load = [load[e] for e in logs]
        phy, count = replicate(node_load, slots_per_node)
        # 3. copies onto the node's GPUs
        gpu_of, slot = pack([node_load[p] / count[p] for p in phy], gpus // nodes)
        for i, p in enumerate(phy):
            phy2log[node * slots_per_node + gpu_of[i] * slots_per_gpu + slot[i]] = logs[p]
    count = [phy2log.count(e) for e in range(n)]
    gpu_load = [
        sum(load[e] / count[e] for e in phy2log[g * slots_per_gpu : (g + 1) * slots_per_gpu])
        for g in range(gpus)
    ]
    return Placement(phy2log, count, gpu_load)


def static_gpu_load(load: torch.Tensor | list[float], gpus: int) -> list[float]:
    """GPU loads without balancing: one copy of each expert, in order, E / G per GPU."""
    load = [float(v) for v in load]
    per = len(load) // gpus
    return [sum(load[g * per : (g + 1) * per]) for g in range(gpus)]
