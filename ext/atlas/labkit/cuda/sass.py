"""The SASS of a cubin, per kernel, and counts of the instructions a page talks about.

``cuobjdump -sass`` (which calls nvdisasm) prints the machine code ptxas produced: the only
place where "this copy uses 128-bit loads" or "this reduction uses five shuffles and no barrier"
can be seen rather than hoped. An instruction is matched by its opcode and dot-separated
modifiers: ``LDG.E.128`` matches ``LDG.E.128`` and ``LDG.E.128.CONSTANT``, but not ``LDG.E``;
``BAR.SYNC`` matches ``BAR.SYNC.DEFER_BLOCKING``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

from atlas.labkit.cuda.nvcc import Cubin
from atlas.labkit.cuda.toolchain import toolchain

ROLE = "support"

_FUNCTION = re.compile(r"^\s*Function : (?P<name>\S+)\s*$")
_INSTRUCTION = re.compile(
    r"^\s*/\*(?P<offset>[0-9a-f]{4,})\*/\s+(?P<predicate>@!?U?P\w+\s+)?(?P<text>[^;]*);"
)


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: its byte offset, guard predicate, opcode and operands."""

    offset: int
    predicate: str
    opcode: str
    operands: str

    def matches(self, pattern: str) -> bool:
        """The opcode is ``pattern`` or ``pattern`` followed by more modifiers."""
        return self.opcode == pattern or self.opcode.startswith(pattern + ".")

    def __str__(self) -> str:
        guard = f"{self.predicate} " if self.predicate else ""
        return f"/*{self.offset:04x}*/ {guard}{self.opcode} {self.operands}".rstrip()


@dataclass(frozen=True)
class Kernel:
    """The SASS of one kernel."""

    name: str
    arch: str
    instructions: tuple[Instruction, ...]

    def count(self, pattern: str) -> int:
        """How many instructions match ``pattern`` (see :meth:`Instruction.matches`)."""
        return sum(i.matches(pattern) for i in self.instructions)

    def counts(self, patterns: Iterable[str]) -> dict[str, int]:
        return {p: self.count(p) for p in patterns}

    def loops(self) -> int:
        """Backward branches: each is the bottom of a loop that the compiler did not unroll (the
        branch-to-itself that pads the end of every kernel is not one)."""
        count = 0
        for i in self.instructions:
            target = re.search(r"(0x[0-9a-f]+)\s*$", i.operands) if i.matches("BRA") else None
            if target and int(target[1], 16) < i.offset:
                count += 1
        return count

    def loop_bodies(self) -> list[Kernel]:
        """The instructions of each loop the compiler kept, from a backward branch's target to the
        branch, in order: what one iteration executes, as opposed to what a prologue (the first
        tile a pipelined loop loads before it starts) or an epilogue adds to the whole kernel."""
        bodies = []
        for i in self.instructions:
            target = re.search(r"(0x[0-9a-f]+)\s*$", i.operands) if i.matches("BRA") else None
            if target and int(target[1], 16) < i.offset:
                start = int(target[1], 16)
                body = tuple(j for j in self.instructions if start <= j.offset <= i.offset)
                bodies.append(Kernel(f"{self.name}@{start:04x}", self.arch, body))
        return bodies

    def opcodes(self) -> list[str]:
        return [i.opcode for i in self.instructions]

    def listing(self, upto: str | None = None) -> str:
        """The instructions as text, one a line (up to and including the first ``upto``)."""
        lines = []
        for i in self.instructions:
            lines.append(str(i))
            if upto is not None and i.matches(upto):
                break
        return "\n".join(lines)


def parse_sass(text: str, arch: str) -> dict[str, Kernel]:
    """Every function of a ``cuobjdump -sass`` listing, by name."""
    kernels: dict[str, list[Instruction]] = {}
    current: list[Instruction] | None = None
    for line in text.splitlines():
        function = _FUNCTION.match(line)
        if function:
            current = kernels.setdefault(function["name"], [])
            continue
        m = _INSTRUCTION.match(line)
        if m and current is not None:
            opcode, _, operands = m["text"].strip().partition(" ")
            predicate = (m["predicate"] or "").strip()
            current.append(Instruction(int(m["offset"], 16), predicate, opcode, operands.strip()))
    return {name: Kernel(name, arch, tuple(ins)) for name, ins in kernels.items()}


def disassemble(cubin: Cubin) -> dict[str, Kernel]:
    """The SASS of every kernel of ``cubin`` (cuobjdump, with nvdisasm from its wheel); the
    listing is cached beside the cubin, since cuobjdump takes as long as a compile."""
    listing = cubin.path.with_name("sass.txt")  # kept beside the cubin in its cache entry
    if listing.exists():
        return parse_sass(listing.read_text(encoding="utf-8"), cubin.arch)
    tools = toolchain()
    env = {**os.environ, "NVDISASM_PATH": str(tools.nvdisasm.parent)}
    env["PATH"] = f"{tools.nvdisasm.parent}{os.pathsep}{env.get('PATH', '')}"
    run = subprocess.run(
        [str(tools.cuobjdump), "-sass", str(cubin.path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if run.returncode != 0:
        raise RuntimeError(f"cuobjdump -sass failed on {cubin.path}: {run.stderr.strip()}")
    try:
        temporary = listing.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(run.stdout, encoding="utf-8")
        os.replace(temporary, listing)
    except OSError:
        pass  # a read-only cache: disassemble again next time
    return parse_sass(run.stdout, cubin.arch)
