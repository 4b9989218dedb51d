"""The synchronisation page's launches, their CPU checks against torch, and the atomics' timings.

Every kernel of ``cuda/kernels/sync.cu`` runs on the CPU model in both thread orders and is
compared with a reference computed by torch, not by any code of ours: ``torch.roll`` per block
for the rotation, ``(x > t).sum()`` for the counts, ``x.max()`` for the CAS maximum,
``x.double().sum()`` for the single-pass sum. The rotation without its barrier is expected to
fail, and the lab shows how.
"""

from __future__ import annotations

import torch

from atlas.labkit.checks.kernels.cuda_common import Build, Findings, gpu_time
from atlas.labkit.cuda.cpu import KernelRunError

ROLE = "check"

THREADS = 256  # kThreads in sync.cu
COUNTERS = ("count_global", "count_global_float", "count_warp_aggregated", "count_per_block")


def _blocks(n: int) -> int:
    return -(-n // THREADS)


def rotated(x: torch.Tensor) -> torch.Tensor:
    """The reference rotation: each block of 256 elements rolled left by one (zero-padded tail)."""
    padded = torch.zeros(_blocks(x.numel()) * THREADS)
    padded[: x.numel()] = x
    return padded.view(-1, THREADS).roll(-1, dims=1).reshape(-1)[: x.numel()]


def _inputs(sizes: tuple[int, ...]) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(n, generator=generator) for n in sizes]


def _orders():
    return ((False, "in order"), (True, "reversed"))


def rotate_findings(b: Build, kernel: str, sizes: tuple[int, ...] = (5_000, 300)) -> Findings:
    """Per size and thread order, how many elements of ``kernel``'s output differ from the
    reference rotation (an empty list: none, in every run)."""
    found: list[str] = []
    for x in _inputs(sizes):
        for reverse, order in _orders():
            out = torch.zeros_like(x)
            try:
                b.cpu.launch(
                    kernel, _blocks(x.numel()), THREADS, x, out, x.numel(), reverse=reverse
                )  # type: ignore[union-attr]
            except KernelRunError as exc:
                found.append(f"n={x.numel()}, threads {order}: {exc}")
                continue
            wrong = int((out != rotated(x)).sum())
            if wrong:
                found.append(f"n={x.numel()}, threads {order}: {wrong} of {x.numel()} wrong")
    return Findings({kernel: found})


def count_findings(
    b: Build, kernels: tuple[str, ...] = COUNTERS, sizes: tuple[int, ...] = (50_000, 1_000)
) -> Findings:
    """Per counting kernel, the runs whose count differs from torch's ``(x > t).sum()``."""
    out = Findings()
    for kernel in kernels:
        found: list[str] = []
        for x in _inputs(sizes):
            n, threshold = x.numel(), 0.5
            want = int((x > threshold).sum())
            for reverse, order in _orders():
                dtype = torch.float32 if kernel.endswith("float") else torch.int32
                count = torch.zeros(1, dtype=dtype)
                try:
                    b.cpu.launch(
                        kernel, _blocks(n), THREADS, x, count, n, threshold, reverse=reverse
                    )  # type: ignore[union-attr]
                except KernelRunError as exc:
                    found.append(f"n={n}, threads {order}: {exc}")
                    continue
                if int(count[0]) != want:
                    found.append(f"n={n}, threads {order}: {int(count[0])}, torch gives {want}")
        out[kernel] = found
    return out


def max_findings(b: Build, sizes: tuple[int, ...] = (50_000, 1_000)) -> Findings:
    """The runs of ``max_cas`` whose maximum differs from ``torch.max`` (bit for bit)."""
    found: list[str] = []
    for x in _inputs(sizes):
        for reverse, order in _orders():
            out = torch.full((1,), float("-inf"))
            b.cpu.launch("max_cas", _blocks(x.numel()), THREADS, x, out, x.numel(), reverse=reverse)  # type: ignore[union-attr]
            if float(out[0]) != float(x.max()):
                found.append(
                    f"n={x.numel()}, threads {order}: {float(out[0])}, torch {float(x.max())}"
                )
    return Findings({"max_cas": found})


def last_block_findings(b: Build, sizes: tuple[int, ...] = (50_000, 1_000)) -> Findings:
    """The runs of ``sum_last_block`` whose ``out[0]`` differs from ``torch.sum`` in float64 by
    more than 1e-5 of the absolute sum, or that leave the ticket counter other than 0."""
    found: list[str] = []
    for x in _inputs(sizes):
        n = x.numel()
        want = float(x.double().sum())
        for reverse, order in _orders():
            partial, tickets, out = (
                torch.zeros(_blocks(n)),
                torch.zeros(1, dtype=torch.int32),
                torch.zeros(1),
            )
            b.cpu.launch(
                "sum_last_block", _blocks(n), THREADS, x, partial, tickets, out, n, reverse=reverse
            )  # type: ignore[union-attr]
            if abs(float(out[0]) - want) > 1e-5 * float(x.abs().sum()):
                found.append(f"n={n}, threads {order}: {float(out[0]):.6g}, torch.sum {want:.6g}")
            if int(tickets[0]) != 0:
                found.append(f"n={n}, threads {order}: tickets left at {int(tickets[0])}")
    return Findings({"sum_last_block": found})


def contention_model(n: int, pass_fraction: float, per_atomic_ns: float) -> dict[str, float]:
    """Microseconds the atomics to one address cost if the L2 serves them one after another at
    ``per_atomic_ns`` each: one per passing thread, one per warp with a passing lane (at most
    ``n / 32``), one per block (``n / 256``). A model of ours, for the page's arithmetic."""
    per_thread = n * pass_fraction
    per_warp = (n / 32) * (1 - (1 - pass_fraction) ** 32)
    per_block = n / THREADS
    return {
        name: count * per_atomic_ns / 1e3
        for name, count in (
            ("per thread", per_thread),
            ("per warp", per_warp),
            ("per block", per_block),
        )
    }


def gpu_timings(n: int = 1 << 26, repeats: int = 20) -> dict[str, dict[str, float]]:
    """On a GPU: each counting kernel's count against torch's, and its time, as
    ``{kernel: {"ms": ..., "gatoms": atomics issued per ns, "ok": 0 or 1}}``, plus torch's own
    ``(x > t).sum()`` for comparison. Threshold -10: every element passes (full contention)."""
    from atlas.labkit.checks.kernels.cuda_common import gpu_build

    _, _, module = gpu_build("sync.cu")
    x = torch.randn(n, device="cuda")
    threshold = -10.0
    want = int((x > threshold).sum())
    atomics = {
        "count_global": n / 32,
        "count_global_float": n,
        "count_warp_aggregated": n / 32,
        "count_per_block": n / THREADS,
    }
    results: dict[str, dict[str, float]] = {}
    for kernel in COUNTERS:
        dtype = torch.float32 if kernel.endswith("float") else torch.int32
        count = torch.zeros(1, dtype=dtype, device="cuda")

        def run(kernel=kernel, count=count) -> None:
            count.zero_()
            module.launch(kernel, _blocks(n), THREADS, x, count, n, threshold)

        ms = gpu_time(run, repeats)
        # a float counter stops at 2**24: 2**24 + 1 rounds back to 2**24 (ties to even)
        ok = int(count.item()) == (min(want, 1 << 24) if kernel.endswith("float") else want)
        results[kernel] = {"ms": ms, "gatoms": atomics[kernel] / ms / 1e6, "ok": float(ok)}
    ms = gpu_time(lambda: (x > threshold).sum(), repeats)
    results["torch (x > t).sum()"] = {"ms": ms, "gatoms": 0.0, "ok": 1.0}
    return results
