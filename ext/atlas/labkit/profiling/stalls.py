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


# A load's destination registers: one, or as many as its width in 32-bit words.
_WIDTH = {"64": 2, "128": 4}
_LOADS = {"global": ("LDG",), "local": ("LDL",), "shared": ("LDS",)}
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
