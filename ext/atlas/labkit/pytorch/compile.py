"""Two models of ``torch.compile``: when Dynamo compiles again, and how Inductor groups kernels.

:class:`GuardModel` restates the caching policy Dynamo applies to one Python frame. Each
compiled graph comes with *guards* on its inputs (dtype, number of dimensions, each size,
each Python scalar); a call whose inputs pass every guard of a cached graph reuses it. When no
graph matches, Dynamo compiles a new one, and *automatic dynamic shapes* decide how general
it is: a size or scalar that has already been seen with two different values becomes a
symbol, so one graph serves all its values, except that sizes 0 and 1 are always specialised.

:func:`kernel_plan` restates Inductor's fusion at the level of a chain of operators: pointwise
operators and reductions that follow each other are generated as one kernel (a reduction
over rows and the pointwise work around it share the loop over rows); a matrix
multiplication is an *extern* kernel (a BLAS or template call) that ends a fused group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

ROLE = "taught"

DYNAMIC = None  # marks a dimension or scalar that a graph accepts with any value (sizes >= 2)


def _signature(arg: Any) -> tuple:
    if isinstance(arg, torch.Tensor):
        return ("tensor", arg.dtype, tuple(arg.shape))
    return ("scalar", type(arg), arg)


@dataclass
class GuardModel:
    """Dynamo's cache for one frame: guards, recompiles and automatic dynamic shapes."""

    graphs: list[list[tuple]] = field(default_factory=list)  # guard per argument, per graph
    seen: list[Any] = field(
        default_factory=list
    )  # per argument: first sizes / value, or DYNAMIC marks

    def call(self, *args: Any) -> bool:
        """Run the frame on ``args``; return True when it had to compile a new graph."""
        sigs = [_signature(a) for a in args]
        if any(
            all(self._passes(g, s) for g, s in zip(graph, sigs, strict=True))
            for graph in self.graphs
        ):
            return False
        self._widen(sigs)
        self.graphs.append([self._guard(s, seen) for s, seen in zip(sigs, self.seen, strict=True)])
        return True

    @staticmethod
    def _passes(guard: tuple, sig: tuple) -> bool:
        if guard[0] != sig[0] or guard[1] != sig[1]:
            return False
        if sig[0] == "scalar":
            return guard[2] is DYNAMIC or guard[2] == sig[2]
        if len(guard[2]) != len(sig[2]):
            return False
        return all(
            (g is DYNAMIC and n >= 2) or g == n for g, n in zip(guard[2], sig[2], strict=True)
        )

    def _widen(self, sigs: list[tuple]) -> None:
        """Remember what changed: a size or scalar seen with two values becomes dynamic."""
        if not self.seen:
            self.seen = [s[2] for s in sigs]
            return
        for i, s in enumerate(sigs):
            old = self.seen[i]
            if s[0] == "scalar":
                self.seen[i] = DYNAMIC if old is DYNAMIC or old != s[2] else old
            elif len(old) != len(s[2]):
                self.seen[i] = tuple(DYNAMIC for _ in s[2])  # a new rank: every size dynamic
            else:
                self.seen[i] = tuple(
                    DYNAMIC if o is DYNAMIC or o != n else o for o, n in zip(old, s[2], strict=True)
                )

    @staticmethod
    def _guard(sig: tuple, seen: Any) -> tuple:
        if sig[0] == "scalar":
            return (sig[0], sig[1], DYNAMIC if seen is DYNAMIC else sig[2])
        sizes = tuple(
            DYNAMIC if mark is DYNAMIC and n not in (0, 1) else n
            for mark, n in zip(seen, sig[2], strict=True)
        )
        return (sig[0], sig[1], sizes)


EXTERN = ("mm", "addmm", "bmm", "baddbmm", "convolution")
REDUCTIONS = ("sum", "mean", "amax", "amin", "max", "min", "var", "prod", "_softmax")


def op_kind(name: str) -> str:
    """``"extern"``, ``"reduction"`` or ``"pointwise"`` for an aten operator name."""
    base = name.removeprefix("aten.").split(".")[0]
    if base in EXTERN:
        return "extern"
    if base in REDUCTIONS:
        return "reduction"
    return "pointwise"


def kernel_plan(op_names: list[str]) -> list[list[str]]:
    """Group a chain of operators into the kernels Inductor generates for it on a CPU."""
    kernels: list[list[str]] = []
    fusing = False
    for name in op_names:
        if op_kind(name) == "extern":
            kernels.append([name])
            fusing = False
        elif fusing:
            kernels[-1].append(name)
        else:
            kernels.append([name])
            fusing = True
    return kernels


def pointwise_chain(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Five elementwise operators: eagerly five kernels, each a round trip to memory."""
    return torch.sigmoid(torch.relu(x * y + 1.0)) * 2.0
