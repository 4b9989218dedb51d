"""What a collective asks of a scale-out fabric: bytes per NIC, all-to-all volume, and how
flows spread (or collide) over the equal-cost paths of a fat-tree.

A leaf switch with ``m`` uplinks sends each flow up one of them. Equal-cost multi-path routing
(ECMP) picks the uplink by hashing the flow's header, so a few large flows can land on the same
uplink while others sit idle; adaptive routing looks at the queues and picks a lightly loaded
one. The simulation places flows both ways; the closed form gives the expected share of uplinks
that ECMP leaves idle.
"""

from __future__ import annotations

import math
import random

ROLE = "taught"


def two_level_nic_bytes(size: float, gpus_per_node: int, nodes: int) -> float:
    """Bytes each NIC sends in a two-level all-reduce: a ring over ``nodes`` of ``size/g``."""
    return 2 * (nodes - 1) / nodes * size / gpus_per_node


def flat_ring_nic_bytes(size: float, n: int) -> float:
    """Bytes the NIC of a node-boundary rank sends in a flat ring over all ``n`` GPUs: all of
    that rank's ``2(n-1)/n`` share, since its ring successor is on the next node."""
    return 2 * (n - 1) / n * size


def expected_remote_ranks(experts: int, ranks: int, top_k: int) -> float:
    """Expected number of *other* ranks a token is sent to when it picks ``top_k`` of
    ``experts`` experts uniformly, ``experts/ranks`` experts per rank, one copy per rank.

    A rank receives nothing only if none of its ``experts/ranks`` experts is picked:
    probability ``C(E - E/R, k) / C(E, k)``.
    """
    per_rank = experts // ranks
    p_none = math.comb(experts - per_rank, top_k) / math.comb(experts, top_k)
    return (ranks - 1) * (1 - p_none)


def ecmp_loads(flows: int, uplinks: int, rng: random.Random) -> list[int]:
    """Flows per uplink when each flow's hash picks an uplink uniformly at random."""
    load = [0] * uplinks
    for _ in range(flows):
        load[rng.randrange(uplinks)] += 1
    return load


def adaptive_loads(flows: int, uplinks: int) -> list[int]:
    """Flows per uplink when each new flow takes the least loaded uplink."""
    load = [0] * uplinks
    for _ in range(flows):
        load[load.index(min(load))] += 1
    return load


def expected_idle_fraction(flows: int, uplinks: int) -> float:
    """Expected share of uplinks that no flow hashes to: ``(1 - 1/m)^f``."""
    return (1 - 1 / uplinks) ** flows


def completion_time(load: list[int], flow_bytes: float, link: float) -> float:
    """Equal flows sharing a link fairly: the busiest uplink finishes last."""
    return max(load) * flow_bytes / link
