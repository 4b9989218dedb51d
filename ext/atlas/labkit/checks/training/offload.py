"""Checks of the labs of ``training/offload.md``.

Three independent routes to what the page's taught code computes: a discrete-event simulation
of the offloaded step (every chunk of gradients and weights through the GPU, the two PCIe
directions and the CPU, with their dependencies) against the closed-form step times and
break-even; torch's own ``torch.optim.AdamW``, timed on this CPU and run with the gradient held
back one step, against the hand-written offloaded update; and Megatron-LM's own
``HybridDeviceOptimizer._get_sub_optimizer_param_groups`` at the pin, run on stand-in CUDA
parameters, against the taught offload split.
"""

from __future__ import annotations

import time
import types
from collections.abc import Callable, Sequence
from typing import Any

import torch

from atlas.labkit.checks.training.common import UPSTREAM
from atlas.labkit.pinned import definitions
from atlas.labkit.training.offload import OffloadCosts

ROLE = "check"

HYBRID = "megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py"


def simulate_period(costs: OffloadCosts, schedule: str, chunks: int = 64, steps: int = 64) -> float:
    """Steady-state seconds per step of an offloaded step, found by running ``steps`` steps
    event by event rather than from a formula.

    The GPU runs forward (a third of ``costs.compute``) then backward, which releases the
    gradients in ``chunks`` equal pieces. Each piece goes down the D2H link, through the CPU
    and up the H2D link, each a resource that serves one piece at a time. ``serial``: all of
    it after backward, one stage after the other. ``pipelined``: after backward, the pieces
    flow through the three resources. ``delayed``: each piece leaves as soon as backward
    produces it, a backward piece waits until the previous step's copy of it has left the
    gradient buffer, and forward of step ``k`` needs the weights updated from step ``k - 2``
    (not ``k - 1``). The period is the interval between steps' last weights arriving back on
    the GPU, which shows a resource that falls behind from the first steps on."""
    n = chunks
    down, cpu_s, up = costs.d2h / n, costs.cpu_adam / n, costs.h2d / n
    fwd, bwd = costs.compute / 3, 2 * costs.compute / 3
    gpu = link_down = cpu = link_up = 0.0
    uploaded: dict[int, float] = {}
    copied_prev = [0.0] * n
    for k in range(steps):
        lag = 2 if schedule == "delayed" else 1
        t = max(gpu, uploaded.get(k - lag, 0.0)) + fwd
        ready = []
        for i in range(n):
            if schedule == "delayed":
                t = max(t, copied_prev[i])
            t += bwd / n
            ready.append(t)
        gpu = t
        if schedule == "serial":
            uploaded[k] = gpu + costs.d2h + costs.cpu_adam + costs.h2d
            continue
        release = ready if schedule == "delayed" else [gpu] * n
        copied, last_up = [], 0.0
        for i in range(n):
            link_down = max(link_down, release[i]) + down
            copied.append(link_down)
            cpu = max(cpu, link_down) + cpu_s
            link_up = max(link_up, cpu) + up
            last_up = link_up
        copied_prev = copied
        uploaded[k] = last_up
    half = steps // 2  # the rate at which updated weights arrive, over the second half
    return (uploaded[steps - 1] - uploaded[half]) / (steps - 1 - half)


def simulated_break_even(
    make_costs: Callable[[float], OffloadCosts], lo: float, hi: float, rel: float = 1e-3
) -> float:
    """The smallest tokens per step at which the simulated delayed step is no longer than its
    compute (within ``rel``), by bisection between ``lo`` (overhead) and ``hi`` (none)."""
    for _ in range(60):
        mid = (lo * hi) ** 0.5
        c = make_costs(mid)
        if simulate_period(c, "delayed") <= c.compute * (1 + rel):
            hi = mid
        else:
            lo = mid
    return hi


def cpu_adam_seconds_per_param(numel: int = 1 << 21, repeats: int = 5) -> float:
    """torch's own AdamW on fp32 CPU tensors, timed here: the best of ``repeats`` steps,
    in seconds per parameter."""
    w = torch.nn.Parameter(torch.randn(numel))
    w.grad = torch.randn(numel)
    opt = torch.optim.AdamW([w], lr=1e-3)
    opt.step()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        opt.step()
        best = min(best, time.perf_counter() - t0)
    return best / numel


def lagged_torch_adamw(
    model: torch.nn.Module,
    batches: Sequence[tuple[torch.Tensor, torch.Tensor]],
    loss_fn: Callable[..., torch.Tensor],
    lr: float,
    weight_decay: float,
    delayed_from: int | None,
) -> list[torch.Tensor]:
    """Train ``model`` with torch's AdamW on fp32 copies of its weights, casting them back
    after each update; from step ``delayed_from`` on, each update uses the previous step's
    gradient instead of this one's. Returns the fp32 weights."""
    params = list(model.parameters())
    main = [torch.nn.Parameter(p.detach().float().clone()) for p in params]
    opt = torch.optim.AdamW(main, lr=lr, weight_decay=weight_decay, foreach=False)
    held: list[torch.Tensor] | None = None
    for t, (x, y) in enumerate(batches, start=1):
        for p in params:
            p.grad = None
        loss_fn(model(x).float(), y).backward()
        fresh = [p.grad.float().clone() for p in params]
        if delayed_from is not None and t >= delayed_from:
            use, held = held, fresh
        else:
            use = fresh
        if use is None:
            continue
        for w, g in zip(main, use, strict=True):
            w.grad = g
        opt.step()
        with torch.no_grad():
            for p, w in zip(params, main, strict=True):
                p.copy_(w)
    if held is not None:  # the last held gradient, as the taught optimizer's flush applies it
        for w, g in zip(main, held, strict=True):
            w.grad = g
        opt.step()
        with torch.no_grad():
            for p, w in zip(params, main, strict=True):
                p.copy_(w)
    return [w.detach() for w in main]


class _StandInParam:
    """A CUDA parameter as Megatron's split sees it: a size, a device, a dtype, and the moves
    ``detach().clone().cpu().pin_memory()`` and ``.float()``; nothing is allocated."""

    def __init__(self, numel: int, is_cuda: bool = True, dtype: Any = torch.bfloat16) -> None:
        self._numel, self.is_cuda, self.dtype = numel, is_cuda, dtype

    def numel(self) -> int:
        return self._numel

    def detach(self) -> _StandInParam:
        return self

    def clone(self) -> _StandInParam:
        return _StandInParam(self._numel, self.is_cuda, self.dtype)

    def cpu(self) -> _StandInParam:
        return _StandInParam(self._numel, False, self.dtype)

    def pin_memory(self) -> _StandInParam:
        return self

    def float(self) -> _StandInParam:
        return _StandInParam(self._numel, self.is_cuda, torch.float32)


def megatron_offload_split(groups: Sequence[Sequence[int]], fraction: float) -> list[bool]:
    """Megatron-LM's own ``_get_sub_optimizer_param_groups`` at the pin, on stand-in bf16 CUDA
    parameters of the given sizes (one list per parameter group), with the settings
    ``get_megatron_optimizer`` passes (``param_update_in_fp32=True``, pinned CPU weights):
    for each parameter in order, whether it got a CPU copy."""
    ns = definitions(
        UPSTREAM,
        HYBRID,
        ["HybridDeviceOptimizer._get_sub_optimizer_param_groups"],
        {"torch": torch},
    )
    made = [[_StandInParam(n) for n in sizes] for sizes in groups]
    hdo = types.SimpleNamespace(
        param_groups=[{"params": ps, "lr": 1e-3} for ps in made],
        param_update_in_fp32=True,
        pin_cpu_params=True,
    )
    cpu_groups, _, to_cpu, _, _ = ns["_get_sub_optimizer_param_groups"](hdo, fraction)
    placed = [p in to_cpu for ps in made for p in ps]
    assert sum(len(g["params"]) for g in cpu_groups) == sum(placed)
    return placed
