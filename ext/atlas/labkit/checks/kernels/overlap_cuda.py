"""A measured chunk pipeline on one GPU, for the ``:needs: cuda`` lab of ``kernels/overlap.md``.

The CPU lab of that page only illustrates the two-engine model. This module measures it: a copy
engine moves chunks from pinned host memory to the GPU on one stream while the SMs multiply the
chunks already there on another, as the all-gather GEMM pipeline does with a peer's slices. The
reference is the measured serial time of the same copies and GEMMs, not the model.
"""

from __future__ import annotations

import torch

ROLE = "check"


def _timed(fn) -> float:
    """Milliseconds of ``fn`` on the GPU, after one warm-up run."""
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop)


def copy_gemm_pipeline(chunks: int = 8, rows: int = 8192, k: int = 8192, n: int = 8192) -> dict:
    """Measure copy time, GEMM time, their serial sum and the pipelined makespan (ms).

    Chunk ``i`` is copied host-to-device on a side stream; the GEMM of chunk ``i`` waits for
    that copy only (an event), so copy ``i + 1`` runs on the copy engine during GEMM ``i``.
    """
    dev = torch.device("cuda")
    host = torch.randn(rows, k, dtype=torch.bfloat16).pin_memory()
    dst = torch.empty(rows, k, dtype=torch.bfloat16, device=dev)
    w = torch.randn(k, n, dtype=torch.bfloat16, device=dev)
    out = torch.empty(rows, n, dtype=torch.bfloat16, device=dev)
    step = rows // chunks
    parts = [slice(i * step, (i + 1) * step) for i in range(chunks)]
    side = torch.cuda.Stream()
    main = torch.cuda.current_stream()

    def copies() -> None:
        for p in parts:
            dst[p].copy_(host[p], non_blocking=True)

    def gemms() -> None:
        for p in parts:
            torch.mm(dst[p], w, out=out[p])

    def pipelined() -> None:
        side.wait_stream(main)
        done = []
        with torch.cuda.stream(side):
            for p in parts:
                dst[p].copy_(host[p], non_blocking=True)
                ev = torch.cuda.Event()
                ev.record(side)
                done.append(ev)
        for p, ev in zip(parts, done, strict=True):
            main.wait_event(ev)
            torch.mm(dst[p], w, out=out[p])

    copy_ms, gemm_ms = _timed(copies), _timed(gemms)
    serial_ms = _timed(lambda: (copies(), gemms()))
    overlap_ms = _timed(pipelined)
    ref = (dst.float() @ w.float()).to(torch.bfloat16)
    return {
        "copy_ms": copy_ms,
        "gemm_ms": gemm_ms,
        "serial_ms": serial_ms,
        "overlap_ms": overlap_ms,
        "correct": bool(torch.allclose(out.float(), ref.float(), rtol=2e-2, atol=2.0)),
    }
