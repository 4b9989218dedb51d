"""Checks of the labs of ``hpc/index.md``.

The chapter's checks: Checkers and instruments for the HPC chapter's labs (not taught on the
pages).
"""

from __future__ import annotations

ROLE = "check"


# -- the registry as a table ----------------------------------------------------------------------
def hardware_rows() -> list[list[str]]:
    """One row per registered GPU: SMs, BF16 and FP8 dense FLOP/s, HBM, L2, SMEM, links."""
    from atlas.labkit.registry.hardware import GPUS

    def fmt(x: float | None, scale: float, unit: str, nd: int = 0) -> str:
        return "n/a" if x is None else f"{x / scale:,.{nd}f} {unit}"

    rows = []
    for g in GPUS.values():
        rows.append(
            [
                g.name,
                "n/a" if g.sms is None else str(g.sms),
                fmt(g.flops.get("bf16"), 1e12, "TF"),
                fmt(g.flops.get("fp8"), 1e12, "TF"),
                fmt(g.hbm_bytes, 1e9, "GB"),
                fmt(g.hbm_bandwidth, 1e12, "TB/s", 2),
                fmt(g.l2_bytes, 2**20, "MiB"),
                fmt(g.smem_per_sm, 2**10, "KiB"),
                fmt(g.nvlink_bandwidth, 1e9, "GB/s"),
                fmt(g.nic_bandwidth, 1e9, "GB/s"),
            ]
        )
    return rows
