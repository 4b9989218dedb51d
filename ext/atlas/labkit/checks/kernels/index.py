"""Checks of the labs of ``kernels/index.md``.

The chapter's checks: memory traces, upstream kernels at their pins, references.
"""

from __future__ import annotations

from atlas.labkit.checks.kernels.common import Trace

ROLE = "check"


def first_warp_addresses(trace: Trace, program=(0, 0, 0), load_index: int = 0) -> list[int]:
    """Byte addresses of the ``load_index``-th load of ``program``, relative to the first."""
    a = trace.loads(program)[load_index].addresses
    return [int(x - a.min()) for x in a]


def occupancy_by_placement(threads: int, regs: int, smem: int, sm) -> int:
    """Blocks resident on one SM, found by admitting blocks one at a time until one does not fit.

    Written independently of :func:`gpu_model.occupancy`: it tracks free warp slots, free
    registers (handed out warp by warp) and free shared memory, and stops at the first block
    some resource cannot hold.
    """
    free_warps, free_regs, free_smem, blocks = (
        sm.max_warps_per_sm,
        sm.registers_per_sm,
        sm.smem_per_sm,
        0,
    )
    unit, warp = sm.register_alloc_unit, sm.warp_size
    warps_needed = (threads + warp - 1) // warp
    per_warp = ((regs * warp + unit - 1) // unit) * unit
    smem_block = smem + sm.smem_reserved_per_block
    smem_block = ((smem_block + sm.smem_alloc_unit - 1) // sm.smem_alloc_unit) * sm.smem_alloc_unit
    while blocks < sm.max_blocks_per_sm:
        if free_warps < warps_needed or free_smem < smem_block:
            break
        granted = 0
        for _ in range(warps_needed):
            if free_regs >= per_warp:
                free_regs -= per_warp
                granted += 1
        if granted < warps_needed:
            break
        free_warps -= warps_needed
        free_smem -= smem_block
        blocks += 1
    return blocks
