"""Checks of the labs of ``pytorch/compile.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import torch

ROLE = "check"


def inductor_code(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> tuple[torch.Tensor, str]:
    """Compile ``fn`` with Inductor on the CPU; return its output and the generated module."""
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    out, codes = run_and_get_code(torch.compile(fn), *args)
    return out, codes[0]


def generated_kernels(code: str) -> list[str]:
    """Kernel calls in the generated ``call`` function: fused C++ kernels and extern calls."""
    body = code.split("def call(", 1)[1]
    return re.findall(r"\b(cpp_fused_\w+|extern_kernels\.\w+)\(", body)


def kernel_loops(code: str, kernel: str) -> int:
    """``for`` loops in the C++ source of one generated kernel."""
    start = code.index(f"'{kernel}'") if f"'{kernel}'" in code else code.index(kernel)
    source = code[start:].split("''')", 1)[0]
    return len(re.findall(r"\bfor\s*\(", source))


def kernel_body(code: str, kernel: str) -> list[str]:
    """The loop and its statements in one generated C++ kernel, casts and guards removed."""
    start = code.index(f"{kernel} = ")
    source = code[start:].split("''')", 1)[0]
    lines = []
    for line in source.splitlines():
        line = re.sub(r"static_cast<int64_t>\(([^()]*)\)", r"\1", line.strip())
        if line.startswith(("for(", "auto tmp")) or ".store(" in line:
            lines.append(line)
    return lines


def dispatched_ops(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> list[str]:
    from atlas.labkit.pytorch.dispatch import OpLog

    log = OpLog()
    with torch.no_grad(), log:
        fn(*args)
    return log.kernels()


def eager_bytes(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> int:
    """Bytes eager mode reads and writes: every operator reads its inputs, writes its output."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    total = 0

    class Traffic(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            nonlocal total
            out = func(*args, **(kwargs or {}))
            for t in tree_flatten((args, kwargs, out))[0]:
                if isinstance(t, torch.Tensor):
                    total += t.numel() * t.element_size()
            return out

    with torch.no_grad(), Traffic():
        fn(*args)
    return total


def explain(fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
    """Dynamo's account of ``fn``: graphs, breaks, and the first line of each reason."""
    torch._dynamo.reset()
    report = torch._dynamo.explain(fn)(*args)
    reasons = [str(b.reason).strip().splitlines()[0] for b in report.break_reasons]
    return {"graphs": report.graph_count, "breaks": report.graph_break_count, "reasons": reasons}
