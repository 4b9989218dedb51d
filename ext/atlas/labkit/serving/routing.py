"""Routing requests over replicas of an engine: by turn, or by the prefix each one caches.

A router in front of ``R`` engine replicas sees every request. Round-robin spreads them
evenly and ignores the caches. Cache-aware routing keeps, per replica, a token-level radix
tree of what it has computed (as SGLang's router approximates it) and sends each request to
the replica with the longest matching prefix; ``slack`` bounds the imbalance this causes: a
replica that already holds more than ``(1 + slack)`` times its fair share of requests is
skipped unless none is below it.
"""

from __future__ import annotations

from atlas.labkit.serving.prefix_cache import RadixCache

ROLE = "taught"

POLICIES = ("round-robin", "cache-aware", "cache-aware-balanced")


def route(trace: list, replicas: int, policy: str, slack: float = 0.25) -> list[int]:
    """The replica chosen for each request of ``trace`` (items with ``prompt`` and
    ``output``), in arrival order."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    trees = [RadixCache() for _ in range(replicas)]
    load = [0] * replicas
    chosen: list[int] = []
    for i, req in enumerate(trace):
        if policy == "round-robin":
            r = i % replicas
        else:
            allowed = list(range(replicas))
            if policy == "cache-aware-balanced":
                cap = (1 + slack) * (i + 1) / replicas
                allowed = [x for x in allowed if load[x] < cap] or allowed
            # longest cached prefix first, then the least loaded, then the lowest index
            r = max(allowed, key=lambda x: (trees[x].match(req.prompt), -load[x], -x))
        trees[r].insert(req.prompt + req.output[:-1])
        load[r] += 1
        chosen.append(r)
    return chosen
