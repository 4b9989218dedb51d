"""The CUDA execution model in numbers: memory transactions, bank conflicts, occupancy.

Three small models, each the rule the hardware applies, written as arithmetic over addresses
and resource counts:

* a warp's global-memory request costs one transaction per distinct 32-byte sector it touches;
* a warp's shared-memory request costs as many passes (wavefronts) as the most-requested bank
  has distinct 4-byte words (the same word read by several threads is broadcast, not repeated);
* an SM keeps as many blocks resident as the scarcest of warps, registers, shared memory and
  block slots allows.

The per-SM figures come from :mod:`atlas.labkit.registry.sm` (``sm_limits``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

ROLE = "taught"

WARP = 32


def sectors_touched(addresses: Sequence[int], access_bytes: int, sector: int = 32) -> int:
    """Distinct ``sector``-byte sectors covered by accesses of ``access_bytes`` at ``addresses``."""
    sectors: set[int] = set()
    for a in addresses:
        first, last = a // sector, (a + access_bytes - 1) // sector
        sectors.update(range(first, last + 1))
    return len(sectors)


def warp_transactions(
    addresses: Sequence[int], access_bytes: int, sector: int = 32, warp: int = WARP
) -> list[int]:
    """Sectors per warp request when thread ``t`` of a block accesses ``addresses[t]``.

    Threads are grouped into warps of ``warp`` consecutive threads, as the hardware groups a
    block's threads; each warp's request costs one transaction per distinct sector.
    """
    return [
        sectors_touched(addresses[w : w + warp], access_bytes, sector)
        for w in range(0, len(addresses), warp)
    ]


def bank_wavefronts(
    addresses: Sequence[int], access_bytes: int = 4, banks: int = 32, bank_bytes: int = 4
) -> int:
    """Passes one shared-memory request needs: the busiest bank's count of distinct words.

    Each thread reads ``access_bytes`` (a multiple of ``bank_bytes``) at its address; word
    ``w = address // bank_bytes`` lives in bank ``w % banks``. Two threads reading the same word
    share it (broadcast); two distinct words in one bank are served in two passes.
    """
    words_in_bank: dict[int, set[int]] = defaultdict(set)
    for a in addresses:
        for w in range(a // bank_bytes, (a + access_bytes) // bank_bytes):
            words_in_bank[w % banks].add(w)
    total_words = sum(len(words) for words in words_in_bank.values())
    # a request wider than one pass of all banks needs at least total/banks passes
    return max(max(len(words) for words in words_in_bank.values()), -(-total_words // banks))


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks per SM, the fraction of the SM's warp slots they fill, and the limiter."""

    blocks: int
    warps: int
    occupancy: float
    limiter: str
    by_resource: dict[str, int]


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def occupancy(threads_per_block: int, regs_per_thread: int, smem_per_block: int, sm) -> Occupancy:
    """Blocks of a kernel resident on one SM with limits ``sm`` (an ``SMLimits``).

    Registers are allocated per warp, rounded up to the allocation unit; shared memory per
    block, plus the system's per-block reservation, rounded up to its unit.
    """
    if threads_per_block > sm.max_threads_per_block:
        raise ValueError(f"{threads_per_block} threads exceed {sm.max_threads_per_block} a block")
    if regs_per_thread > sm.max_registers_per_thread:
        raise ValueError(f"{regs_per_thread} registers exceed {sm.max_registers_per_thread}")
    if smem_per_block > sm.max_smem_per_block:
        raise ValueError(f"{smem_per_block} B of shared memory exceed {sm.max_smem_per_block}")
    warps = -(-threads_per_block // sm.warp_size)
    regs_per_warp = _round_up(regs_per_thread * sm.warp_size, sm.register_alloc_unit)
    smem = _round_up(smem_per_block + sm.smem_reserved_per_block, sm.smem_alloc_unit)
    by_resource = {
        "warps": sm.max_warps_per_sm // warps,
        "registers": (sm.registers_per_sm // regs_per_warp) // warps if regs_per_thread else 10**9,
        "shared memory": sm.smem_per_sm // smem,
        "blocks": sm.max_blocks_per_sm,
    }
    limiter = min(by_resource, key=by_resource.get)
    blocks = by_resource[limiter]
    return Occupancy(
        blocks, blocks * warps, blocks * warps / sm.max_warps_per_sm, limiter, by_resource
    )
