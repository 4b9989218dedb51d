"""Laptop and phone systems-on-chip: unified memory capacity and bandwidth, each with its source.

An edge device runs a model out of one pool of DRAM that the CPU, GPU and NPU share, so two
figures bound what it can serve: how many bytes fit (capacity) and how many it reads per second
(bandwidth). Units are SI (``1 GB/s = 1e9 B/s``; capacities in the vendor's decimal GB). Where a
vendor prints the memory's transfer rate and not its bandwidth, the entry keeps the rate and the
bus width and derives the bandwidth, and says so in its source note.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROLE = "support"

GB = 1e9


@dataclass(frozen=True)
class SoC:
    """One system-on-chip as its vendor specifies its memory.

    ``max_memory_bytes`` is the largest configuration the vendor offers; a given phone or laptop
    may ship with less. ``bandwidth`` is the peak of the memory interface, shared by every
    processor on the chip.
    """

    name: str
    vendor: str
    memory: str
    max_memory_bytes: float
    bandwidth: float  # bytes/s
    sources: dict[str, str] = field(default_factory=dict, repr=False)


def lpddr_bandwidth(mega_transfers_per_s: float, bus_bits: int) -> float:
    """Peak bytes/s of an LPDDR interface: transfers per second times bytes per transfer."""
    return mega_transfers_per_s * 1e6 * bus_bits / 8


SOCS: dict[str, SoC] = {
    s.name: s
    for s in (
        SoC(
            name="Apple M4",
            vendor="Apple",
            memory="unified memory",
            max_memory_bytes=32 * GB,
            bandwidth=120 * GB,
            sources={"memory": "cite:apple2024m4 (M4: up to 32GB unified memory, 120GB/s)"},
        ),
        SoC(
            name="Apple M4 Pro",
            vendor="Apple",
            memory="unified memory",
            max_memory_bytes=64 * GB,
            bandwidth=273 * GB,
            sources={"memory": "cite:apple2024m4 (M4 Pro: up to 64GB, 273GB/s)"},
        ),
        SoC(
            name="Apple M4 Max",
            vendor="Apple",
            memory="unified memory",
            max_memory_bytes=128 * GB,
            bandwidth=546 * GB,
            sources={"memory": "cite:apple2024m4 (M4 Max: up to 128GB, 546GB/s)"},
        ),
        SoC(
            name="Snapdragon 8 Elite",
            vendor="Qualcomm",
            memory="LPDDR5X, 5300 MHz (10,600 MT/s), 64-bit",
            max_memory_bytes=24 * GB,
            bandwidth=lpddr_bandwidth(10_600, 64),
            sources={
                "memory": "cite:qualcomm2024snapdragon (LPDDR5x up to 5300 MHz, up to 24GB)",
                "bandwidth": "derived: 10,600 MT/s x 8 bytes; the 64-bit bus and the 84.8 GB/s "
                "it gives are from cite:geektopia2024qualcomm, not from Qualcomm",
            },
        ),
    )
}


def soc(name: str) -> SoC:
    """The registered system-on-chip called ``name`` (see ``SOCS`` for the names)."""
    try:
        return SOCS[name]
    except KeyError:
        raise KeyError(f"unknown SoC {name!r}; known: {', '.join(SOCS)}") from None
