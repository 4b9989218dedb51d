"""Reading a memory snapshot's allocation trace: the peak, what was live at the peak, and
what was never freed.

A snapshot from ``torch.cuda.memory._snapshot()`` (and the one that
``torch.cuda._memory_viz._profile_to_snapshot`` builds from a CPU profile) holds, per device,
a list of trace entries with an ``action`` ("alloc", "free_requested", "free_completed", and
segment events), an ``addr``, a ``size`` and the Python ``frames`` of the allocation. Memory
returns to the allocator at "free_completed"; "free_requested" only marks the request (a block
freed on one stream waits for the other streams' uses).
"""

from __future__ import annotations

from dataclasses import dataclass

ROLE = "taught"


@dataclass
class Replay:
    peak: int  # bytes live at the worst moment
    peak_index: int  # the trace entry that reached it
    live_at_peak: dict[int, dict]  # addr -> the alloc entry, at the peak
    live_at_end: dict[int, dict]  # addr -> the alloc entry, never freed
    timeline: list[int]  # live bytes after each entry


def replay(trace: list[dict]) -> Replay:
    live: dict[int, dict] = {}
    now = peak = 0
    peak_index = -1
    at_peak: dict[int, dict] = {}
    timeline = []
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            live[e["addr"]] = e
            now += e["size"]
            if now > peak:
                peak, peak_index, at_peak = now, i, dict(live)
        elif e["action"] == "free_completed":
            now -= live.pop(e["addr"])["size"]
        timeline.append(now)
    return Replay(peak, peak_index, at_peak, dict(live), timeline)


def bytes_by(entries: dict[int, dict], key: str = "category") -> dict[str, int]:
    """Sum the sizes of live entries by a field (the profiler's category, or a frame)."""
    out: dict[str, int] = {}
    for e in entries.values():
        k = (
            e.get(key, "unknown")
            if key != "frame"
            else (e["frames"][0]["name"] if e["frames"] else "?")
        )
        out[k] = out.get(k, 0) + e["size"]
    return out


def mlp_saved_elements(tokens: int, hidden: int, inner: int) -> dict[str, int]:
    """What one MLP block (Linear, GeLU, Linear) keeps for backward, in elements: the rows of
    the Training chapter's activation table without the norm and the dropout mask."""
    return {
        "input of the first matrix": tokens * hidden,
        "input of the GeLU": tokens * inner,
        "input of the second matrix": tokens * inner,
    }
