"""Packing variable-length multimodal samples into sequences, and sequences onto ranks."""

from __future__ import annotations

import bisect

ROLE = "taught"


def pack_greedy(lengths: list[int], capacity: int) -> list[list[int]]:
    """Best-fit packing: sort the lengths, then fill each pack by repeatedly taking the
    largest remaining sample that still fits. Returns packs as lists of lengths."""
    remaining = sorted(lengths)
    if remaining and remaining[-1] > capacity:
        raise ValueError("a sample is longer than the pack")
    packs = []
    while remaining:
        pack, room = [], capacity
        while True:
            i = bisect.bisect(remaining, room) - 1
            if i < 0:
                break
            room -= remaining[i]
            pack.append(remaining.pop(i))
        packs.append(pack)
    return packs


def balance(loads: list[int], ranks: int) -> list[list[int]]:
    """Longest-processing-time-first: give each load, largest first, to the least-loaded rank."""
    bins: list[list[int]] = [[] for _ in range(ranks)]
    totals = [0] * ranks
    for load in sorted(loads, reverse=True):
        r = totals.index(min(totals))
        bins[r].append(load)
        totals[r] += load
    return bins


def imbalance(bins: list[list[int]], cost=lambda n: n) -> float:
    """Slowest rank over the mean rank, with a per-sample ``cost`` (tokens by default; pass
    ``lambda n: n * n`` for the attention term)."""
    totals = [sum(cost(x) for x in b) for b in bins]
    return max(totals) / (sum(totals) / len(totals))
