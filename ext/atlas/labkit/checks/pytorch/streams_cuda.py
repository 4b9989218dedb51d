"""GPU checks of ``pytorch/streams.md``: the page's stream, allocator and graph claims, measured.

Each function runs real CUDA work (``torch.cuda._sleep`` spins a kernel for a number of
cycles, so stream timing does not depend on the GPU's speed) and returns what it observed, so
that the labs compare the page's model with the device rather than with itself.
"""

from __future__ import annotations

from typing import Any

import torch

ROLE = "check"

MIB = 1024**2


def cycles_per_ms() -> float:
    """GPU clock cycles that ``torch.cuda._sleep`` spins per millisecond, measured."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1_000_000)  # warm-up
    start.record()
    torch.cuda._sleep(10_000_000)
    end.record()
    end.synchronize()
    return 10_000_000 / start.elapsed_time(end)


def overlapped_backward_ms(n: int, c_ms: float, m_ms: float) -> float:
    """Measured time of ``n`` buckets: compute ``c_ms`` each, then an ``m_ms`` "all-reduce"
    on a second stream that waits on an event recorded after the bucket's compute."""
    rate = cycles_per_ms()
    compute, comm = torch.cuda.current_stream(), torch.cuda.Stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record(compute)
    comm.wait_stream(compute)
    for _ in range(n):
        torch.cuda._sleep(int(c_ms * rate))
        ready = compute.record_event()
        comm.wait_event(ready)
        with torch.cuda.stream(comm):
            torch.cuda._sleep(int(m_ms * rate))
    compute.wait_stream(comm)
    end.record(compute)
    end.synchronize()
    return start.elapsed_time(end)


def side_stream_reuse(mode: str, nbytes: int = 4 * MIB) -> dict[str, Any]:
    """The page's scenario on a GPU: a buffer of ones made on the compute stream, summed on a
    side stream after a long spin, dropped, and a new buffer of twos written on the compute
    stream. Returns whether the address was reused and whether the side stream's sum is right.
    """
    compute, comm = torch.cuda.current_stream(), torch.cuda.Stream()
    a = torch.ones(nbytes, dtype=torch.uint8, device="cuda")
    comm.wait_stream(compute)
    with torch.cuda.stream(comm):
        torch.cuda._sleep(50 * int(cycles_per_ms()))  # the "send" is still queued behind this
        total = a.sum()
    if mode == "record_stream":
        a.record_stream(comm)
    elif mode == "wait_stream":
        compute.wait_stream(comm)
    address = a.data_ptr()
    del a
    b = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    b.fill_(2)
    reused = b.data_ptr() == address
    torch.cuda.synchronize()
    return {"reused": reused, "sum_correct": int(total) == nbytes}
