"""Prefill and decode on separate instances: who sends which heads where, and the latencies.

A prefill instance with tensor parallelism ``t_p`` holds each layer's key/value heads in
``t_p`` groups; a decode instance with ``t_d`` expects ``t_d`` groups. :func:`transfer_plan`
lists, for every pair of ranks, the heads that must travel between them. The blocks a
sequence occupies differ too (each instance allocates its own, and may use another block
size), so a transfer reads the source's slots and writes the destination's.

:func:`decode_only_cost` turns a step cost into the cost seen by a decode instance, whose
prompts arrive with their keys and values already computed.
"""

from __future__ import annotations

from collections.abc import Callable

ROLE = "taught"

Cost = Callable[[list[tuple[int, int]]], float]


def transfer_plan(kv_heads: int, tp_prefill: int, tp_decode: int) -> list[tuple[int, int, range]]:
    """(prefill rank, decode rank, KV heads) for every pair that exchanges something.

    Prefill rank ``i`` holds heads ``[i H/t_p, (i+1) H/t_p)``, decode rank ``j`` needs
    ``[j H/t_d, (j+1) H/t_d)``; each pair sends the intersection. With ``t_d > t_p`` a prefill
    rank feeds ``t_d / t_p`` decode ranks; with ``t_d < t_p`` a decode rank gathers from
    ``t_p / t_d`` prefill ranks.
    """
    for tp in (tp_prefill, tp_decode):
        if kv_heads % tp:
            raise ValueError(f"{kv_heads} KV heads do not split over {tp} ranks")
    src, dst = kv_heads // tp_prefill, kv_heads // tp_decode
    plan = []
    for i in range(tp_prefill):
        for j in range(tp_decode):
            lo, hi = max(i * src, j * dst), min((i + 1) * src, (j + 1) * dst)
            if lo < hi:
                plan.append((i, j, range(lo, hi)))
    return plan


def decode_only_cost(cost: Cost) -> Cost:
    """The step cost of a decode instance: a step that only "prefills" prompts whose keys and
    values arrived over the network computes nothing (nano-vllm-style steps are either all
    prefill or all decode, so decode steps keep their full cost)."""

    def decode_cost(chunks: list[tuple[int, int]]) -> float:
        if all(n > 1 for _, n in chunks):
            return 0.0
        return cost(chunks)

    return decode_cost
