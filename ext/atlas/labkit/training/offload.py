"""Optimizer offload to the CPU: the costs of one step, the break-even batch, and the update.

ZeRO-Offload keeps the 16-bit weights and gradients on the GPU and the fp32 main weights and
Adam's moments in host memory, where the CPU runs the update. Each step then moves the
gradients down and the weights back up over PCIe, and the CPU spends time on Adam. Whether that
costs anything depends on whether the GPU's own work per step is longer than each of those
three: :func:`step_costs` prices them, :func:`step_time` puts them on one of three schedules and
:func:`break_even_tokens` solves for the tokens per step above which the delayed schedule hides
them all. :class:`OffloadedAdam` is the update itself, on fp32 copies outside the model, with
ZeRO-Offload's one-step delayed parameter update; :func:`offload_split` is Megatron-LM's rule
for which tensors go to the CPU when only a fraction is offloaded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from atlas.labkit.training.optimizers import adam_step

ROLE = "taught"

SCHEDULES = ("serial", "pipelined", "delayed")


@dataclass(frozen=True)
class OffloadCosts:
    """Seconds one GPU spends per step on each resource the offloaded step uses."""

    compute: float  # forward and backward on the GPU
    d2h: float  # gradients down, device to host
    cpu_adam: float  # the optimizer step on the CPU
    h2d: float  # updated 16-bit weights up, host to device


def step_costs(
    params: float,
    tokens: float,
    gpu_flops: float,
    pcie_bytes_per_s: float,
    adam_s_per_param: float,
    grad_bytes: int = 2,
    param_bytes: int = 2,
    shards: int = 1,
) -> OffloadCosts:
    """The four costs of one step: 6 FLOPs per parameter per token on the GPU at its achieved
    rate; ``grad_bytes`` per offloaded parameter down and ``param_bytes`` up, each direction
    at the full per-direction PCIe rate (the link is full duplex); one Adam update per
    offloaded parameter on the CPU. With ZeRO-2 over ``shards`` ranks each GPU offloads only
    its ``1/shards`` of the parameters, but still computes on all of them."""
    owned = params / shards
    return OffloadCosts(
        compute=6 * params * tokens / gpu_flops,
        d2h=grad_bytes * owned / pcie_bytes_per_s,
        cpu_adam=owned * adam_s_per_param,
        h2d=param_bytes * owned / pcie_bytes_per_s,
    )


def step_time(costs: OffloadCosts, schedule: str, chunks: int = 1) -> float:
    """Seconds per step (steady state) of an offloaded step on one of three schedules.

    - ``serial``: after backward, copy every gradient down, run Adam, copy every weight up,
      one after another;
    - ``pipelined``: the same three stages after backward, but in ``chunks`` equal pieces that
      flow through the three resources as a flow shop (Megatron-LM's per-tensor CPU optimizers
      with separate copy streams): the stages of one piece, then ``chunks - 1`` pieces of the
      slowest stage;
    - ``delayed``: ZeRO-Offload's one-step delayed parameter update, where the transfers and
      the CPU step of step ``t`` run during step ``t + 1``'s forward and backward, so the
      step is as long as its busiest resource (in the limit of fine chunks).
    """
    c = costs
    if schedule == "serial":
        return c.compute + c.d2h + c.cpu_adam + c.h2d
    if schedule == "pipelined":
        stages = (c.d2h, c.cpu_adam, c.h2d)
        return c.compute + sum(stages) / chunks + (chunks - 1) / chunks * max(stages)
    if schedule == "delayed":
        return max(c.compute, c.d2h, c.cpu_adam, c.h2d)
    raise ValueError(f"unknown schedule {schedule!r}; known: {', '.join(SCHEDULES)}")


def break_even_tokens(
    gpu_flops: float,
    pcie_bytes_per_s: float,
    adam_s_per_param: float,
    grad_bytes: int = 2,
    param_bytes: int = 2,
    shards: int = 1,
) -> float:
    """Tokens per GPU per step above which the delayed schedule costs nothing.

    The GPU's time grows with the tokens, the three offload costs do not, and all four are
    linear in the parameters: setting ``6 Psi T / F`` equal to the largest per-parameter cost
    cancels ``Psi``, so the break-even does not depend on the model's size."""
    per_param = max(grad_bytes / pcie_bytes_per_s, param_bytes / pcie_bytes_per_s)
    per_param = max(per_param, adam_s_per_param) / shards
    return gpu_flops / 6 * per_param


def offload_split(numels: Sequence[int], fraction: float) -> list[bool]:
    """Which tensors Megatron-LM's hybrid optimizer puts on the CPU (``True``) for an
    ``offload_fraction``: in parameter order, each tensor goes to the CPU while the elements
    offloaded so far are below ``fraction`` of the total, so the last one may overshoot."""
    threshold = sum(numels) * fraction
    offloaded, placed = 0, []
    for n in numels:
        to_cpu = offloaded < threshold
        offloaded += n if to_cpu else 0
        placed.append(to_cpu)
    return placed


class OffloadedAdam:
    """AdamW on fp32 main weights kept outside the model (on the CPU), the model's 16-bit
    weights refreshed from them after each update.

    ``step`` copies the gradients down (the D2H transfer) and updates the main weights with
    Adam; the cast back into the model's parameters is the H2D transfer. From step
    ``delayed_from`` on (1-based; ``None``: never) the update is ZeRO-Offload's delayed one:
    the gradient of step ``t`` is applied during step ``t + 1``, so the weights the model runs
    at step ``t`` have seen the gradients up to step ``t - 2``."""

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        delayed_from: int | None = None,
    ) -> None:
        self.params = list(params)
        self.main = [p.detach().to("cpu", torch.float32, copy=True) for p in self.params]
        self.state: list[dict[str, Any]] = [{} for _ in self.params]
        self.hyper = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        self.delayed_from = delayed_from
        self.steps = 0
        self.grads = [torch.zeros_like(w) for w in self.main]  # fp32, pinned in production
        self.pending = False  # the gradients in ``self.grads`` still wait for their update

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        self.steps += 1
        delayed = self.delayed_from is not None and self.steps >= self.delayed_from
        if delayed and self.pending:
            self._update()  # last step's gradients, while this step's are on their way down
        for buf, p in zip(self.grads, self.params, strict=True):
            buf.copy_(p.grad)  # the D2H transfer, and the cast to fp32
        self.pending = delayed
        if not delayed:
            self._update()

    def flush(self) -> None:
        """Apply the gradients still waiting at the end of training (the delayed schedule's
        last ones)."""
        if self.pending:
            self._update()
            self.pending = False

    def _update(self) -> None:
        for w, g, s in zip(self.main, self.grads, self.state, strict=True):
            adam_step(w, g, s, **self.hyper, decoupled=True)
        with torch.no_grad():
            for p, w in zip(self.params, self.main, strict=True):
                p.copy_(w)  # the cast to the model's dtype, and the H2D transfer

    def bytes_by_side(self) -> dict[str, int]:
        """Bytes held on the GPU side (weights and gradients of the model) and the CPU side
        (main weights, Adam's moments, the gradients copied down)."""

        def size(t: torch.Tensor | None) -> int:
            return 0 if t is None else t.numel() * t.element_size()

        gpu = sum(size(p) + size(p.grad) for p in self.params)
        cpu = sum(size(w) for w in self.main)
        cpu += sum(size(t) for s in self.state for t in s.values() if torch.is_tensor(t))
        cpu += sum(size(g) for g in self.grads)
        return {"gpu": gpu, "cpu": cpu}
