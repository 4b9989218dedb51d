"""ptxas's resource report, parsed into one record per kernel.

With ``-Xptxas -v``, ptxas prints for every entry function the registers per thread, the static
shared memory per block, the barriers, the constant bank and the per-thread stack frame with its
spill stores and loads. These are the allocator's own numbers: the inputs of occupancy, and the
evidence for a page's "no spills" or "1 KiB of shared memory". A report shaped in a way this
parser does not know is an error, never a silent zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ROLE = "support"

_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>sm_\w+)'")
_FRAME = re.compile(
    r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, "
    r"(?P<loads>\d+) bytes spill loads"
)
_USED = re.compile(r"Used (?P<registers>\d+) registers")
_AMOUNT = re.compile(r"(?P<n>\d+) bytes (?P<what>smem|lmem|cmem\[\d+\])")
_BARRIERS = re.compile(r"used (?P<n>\d+) barriers")


class ReportError(ValueError):
    """ptxas's output did not have the shape this parser reads."""


@dataclass(frozen=True)
class Resources:
    """What ptxas allocated for one kernel on one architecture (bytes, except counts)."""

    kernel: str
    arch: str
    registers: int  # 32-bit registers per thread
    shared: int  # static shared memory per block
    local: int  # per-thread local memory: the stack frame (spills, local arrays)
    spill_stores: int
    spill_loads: int
    barriers: int
    constant: int  # bytes of constant bank 0 (the kernel's parameters and more)

    @property
    def spills(self) -> bool:
        return bool(self.spill_stores or self.spill_loads)


def parse_report(text: str) -> dict[str, Resources]:
    """Every kernel of a ``-Xptxas -v`` report, by name (the name as compiled: ``extern "C"``)."""
    found: dict[str, Resources] = {}
    blocks = re.split(r"(?=ptxas info\s*: Compiling entry function)", text)
    for block in blocks:
        entry = _ENTRY.search(block)
        if entry is None:
            continue
        frame, used = _FRAME.search(block), _USED.search(block)
        if frame is None or used is None:
            raise ReportError(f"no stack frame or register line for {entry['name']} in:\n{block}")
        amounts = {m["what"]: int(m["n"]) for m in _AMOUNT.finditer(block)}
        barriers = _BARRIERS.search(block)
        found[entry["name"]] = Resources(
            kernel=entry["name"],
            arch=entry["arch"],
            registers=int(used["registers"]),
            shared=amounts.get("smem", 0),
            local=max(int(frame["stack"]), amounts.get("lmem", 0)),
            spill_stores=int(frame["stores"]),
            spill_loads=int(frame["loads"]),
            barriers=int(barriers["n"]) if barriers else 0,
            constant=amounts.get("cmem[0]", 0),
        )
    if not found:
        raise ReportError(f"no entry function in the ptxas report:\n{text[:2000]}")
    return found
