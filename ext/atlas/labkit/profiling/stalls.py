"""Nsight Compute's warp-stall reasons, and the SASS instructions each one is charged to.

Nsight Compute reports a stall twice: per kernel in the Warp State Statistics section
(``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio``, cycles per issued
instruction) and per instruction in the Source Counters section, whose sampler records the
reason a sampled warp could not issue (``smsp__pcsamp_warps_issue_stalled_<reason>``) at the
program counter of the instruction it was waiting to issue. A warp stalled on a load's
result is therefore charged at the load's first consumer, not at the load; a warp stalled at a
barrier, at the ``BAR.SYNC``. :func:`dependencies` and :func:`stall_sites` find those
instructions in a kernel's SASS, so that a page can show where a profile's samples would land
before any GPU runs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from atlas.labkit.cuda.sass import Instruction, Kernel

ROLE = "taught"


@dataclass(frozen=True)
class Stall:
    """One stall reason: its two metric names, what the warp waits on, and the usual fix."""

    reason: str
    waits_on: str
    fix: str

    @property
    def per_issue(self) -> str:
        """The Warp State Statistics metric: stall cycles per issued instruction."""
        return f"smsp__average_warps_issue_stalled_{self.reason}_per_issue_active.ratio"

    @property
    def sampled(self) -> str:
        """The Source Counters metric: samples of warps stalled for this reason, per PC."""
        name = "no_instructions" if self.reason == "no_instruction" else self.reason
        return f"smsp__pcsamp_warps_issue_stalled_{name}"


STALLS = {
    s.reason: s
    for s in (
        Stall(
            "long_scoreboard", "the result of an L1TEX load (global, local)", "more loads in flight"
        ),
        Stall(
            "short_scoreboard",
            "the result of an MIO operation (shared memory, MUFU)",
            "fewer bank conflicts",
        ),
        Stall("mio_throttle", "room in the MIO instruction queue", "fewer, wider shared accesses"),
        Stall("lg_throttle", "room in the local/global queue of L1", "wider loads, no spills"),
        Stall("barrier", "sibling warps at BAR.SYNC", "balanced work per warp, fewer barriers"),
        Stall("membar", "a memory fence", "no fence that is not needed"),
        Stall(
            "math_pipe_throttle",
            "a free slot in an oversubscribed math pipe",
            "another pipe or type",
        ),
        Stall("not_selected", "nothing: eligible, another warp issued", "none needed"),
        Stall("wait", "a fixed latency the compiler encoded", "more independent instructions"),
        Stall("dispatch_stall", "the dispatcher, held back by a conflict", "none from source"),
    )
}

# A load's destination registers: one, or as many as its width in 32-bit words.
_WIDTH = {"64": 2, "128": 4}
_LOADS = {"global": ("LDG",), "local": ("LDL",), "shared": ("LDS", "LDSM")}
_REGISTER = re.compile(r"(?<![\w.])R(\d+)(?:\.(64|128))?\b")


def _registers(operand: str) -> set[int]:
    """The general registers an operand names (``R4.64`` is the pair R4, R5; RZ is none)."""
    found: set[int] = set()
    for m in _REGISTER.finditer(operand):
        first = int(m[1])
        found.update(range(first, first + _WIDTH.get(m[2] or "", 1)))
    return found


def destination(load: Instruction) -> set[int]:
    """The registers a load writes: its first operand, widened by the ``.64``/``.128`` suffix."""
    width = next((_WIDTH[m] for m in load.opcode.split(".") if m in _WIDTH), 1)
    first = _REGISTER.search(load.operands.split(",")[0])
    return set(range(int(first[1]), int(first[1]) + width)) if first else set()


@dataclass(frozen=True)
class Dependency:
    """A load, the first later instruction that names one of its registers, and the
    instructions between them: the work a warp can issue before the scoreboard stops it."""

    load: Instruction
    consumer: Instruction | None
    between: int


def dependencies(kernel: Kernel, space: str = "global") -> list[Dependency]:
    """Each load of ``space`` with its first consumer in address order (which is issue order in
    straight-line code and within one loop body). The consumer is the instruction a sampled
    long-scoreboard stall (short scoreboard, for shared) is charged to."""
    out = []
    body = kernel.instructions
    for k, load in enumerate(body):
        if not any(load.matches(op) for op in _LOADS[space]):
            continue
        regs = destination(load)
        later = (j for j, i in enumerate(body[k + 1 :]) if regs & _registers(i.operands))
        j = next(later, None)
        out.append(Dependency(load, None if j is None else body[k + 1 + j], j or 0))
    return out


def stall_sites(kernel: Kernel, reason: str) -> list[Instruction]:
    """The instructions a sampled stall of ``reason`` is charged to: the first consumers of
    global and local loads (long scoreboard), of shared loads (short scoreboard), the barriers
    (barrier) and the fences (membar)."""
    if reason == "long_scoreboard":
        deps = dependencies(kernel, "global") + dependencies(kernel, "local")
        return sorted({d.consumer for d in deps if d.consumer}, key=lambda i: i.offset)
    if reason == "short_scoreboard":
        return sorted(
            {d.consumer for d in dependencies(kernel, "shared") if d.consumer},
            key=lambda i: i.offset,
        )
    opcode = {"barrier": "BAR.SYNC", "membar": "MEMBAR"}.get(reason)
    if opcode is None:
        raise ValueError(f"{reason!r}: the SASS alone does not place this stall")
    return [i for i in kernel.instructions if i.matches(opcode)]
