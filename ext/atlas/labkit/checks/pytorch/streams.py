"""Checks of the labs of ``pytorch/streams.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

from typing import Any

from atlas.labkit.pytorch import allocator as alloc_mod

ROLE = "check"


def races(ops: list[Any]) -> list[tuple[str, str]]:
    """Pairs of operations on different streams that touch the same bytes at the same time.

    Looks only at addresses and times: two operations race when their intervals overlap, they
    run on different streams, and one writes a byte range the other reads or writes.
    """

    def overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
        return a[0] < b[0] + b[1] and b[0] < a[0] + a[1]

    found = []
    for i, a in enumerate(ops):
        for b in ops[i + 1 :]:
            if a.stream == b.stream or not (a.start < b.end and b.start < a.end):
                continue
            touched_a = a.reads + a.writes
            touched_b = b.reads + b.writes
            if any(overlap(w, r) for w in a.writes for r in touched_b) or any(
                overlap(w, r) for w in b.writes for r in touched_a
            ):
                found.append((a.name, b.name))
    return found


def side_stream_reuse(mode: str, nbytes: int = 4 * alloc_mod.MIB) -> dict[str, Any]:
    """A buffer made on the compute stream, read by a send on a side stream, then freed.

    ``mode`` is what the program does before dropping the buffer: ``"nothing"``,
    ``"record_stream"`` (tell the allocator about the side stream) or ``"wait_stream"`` (make
    the compute stream wait for the side stream). The next allocation of the same size on the
    compute stream is then written by a kernel. Returns the races and the memory reserved.
    """
    from atlas.labkit.pytorch.allocator import CachingAllocator
    from atlas.labkit.pytorch.streams import Timeline

    mem, tl = CachingAllocator(), Timeline()
    a = mem.malloc(nbytes, stream=0)
    tl.launch("compute", "produce A", 1.0, writes=((a.address, a.size),))
    tl.wait("comm", tl.record("compute"))
    tl.launch("comm", "send A", 5.0, reads=((a.address, a.size),))
    if mode == "record_stream":
        mem.record_stream(a, stream=1)
    elif mode == "wait_stream":
        tl.wait_stream("compute", "comm")
    mem.free(a)  # Python drops the last reference; the send is still queued
    b = mem.malloc(nbytes, stream=0)
    tl.launch("compute", "produce B", 1.0, writes=((b.address, b.size),))
    return {
        "same_address": a.address == b.address,
        "races": races(tl.ops),
        "reserved_MiB": mem.reserved / alloc_mod.MIB,
        "finish": tl.makespan(),
    }
