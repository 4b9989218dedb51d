"""Mixed-precision training: the loss scaler, fp32 main copies, global-norm clipping, shards.

The model computes in 16 bits (bf16 or fp16); the optimizer works on 32-bit *main* copies.
:class:`MixedPrecisionAdam` follows Megatron-LM's ``MixedPrecisionOptimizer``: gradients land
in an fp32 ``main_grad`` buffer (a hook per parameter, as Megatron's DDP does), the step copies
them to the fp32 main parameters, unscales them and checks for inf/NaN, skips the update on
overflow, clips by the global norm, runs Adam on the main parameters, and copies them back into
the 16-bit model parameters.

:class:`DynamicLossScaler` has the semantics of Megatron's ``DynamicGradScaler``: back off by
``backoff_factor`` once ``hysteresis`` overflowing steps have been seen since the last growth,
grow by ``growth_factor`` after ``growth_interval`` clean steps in a row.

:func:`shard_ranges` cuts a contiguous gradient buffer into one range per data-parallel rank,
as the distributed optimizer does, and maps each parameter onto its rank's range.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch
import torch.distributed as dist

ROLE = "taught"


class DynamicLossScaler:
    """Multiply the loss by ``scale`` so that small fp16 gradients do not flush to zero.

    ``update(found_inf)`` after every step. On an overflow the growth count restarts and the
    hysteresis budget drops by one; when the budget is spent the scale is multiplied by
    ``backoff_factor`` (never below ``min_scale``). The budget is refilled only when the scale
    grows, that is after ``growth_interval`` consecutive clean steps.
    """

    def __init__(
        self,
        initial_scale: float = 2.0**32,
        min_scale: float = 1.0,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 1000,
        hysteresis: int = 2,
    ) -> None:
        if not (0.0 < min_scale <= initial_scale and growth_factor > 1.0):
            raise ValueError("need 0 < min_scale <= initial_scale and growth_factor > 1")
        if not (0.0 < backoff_factor < 1.0 and growth_interval > 0 and hysteresis > 0):
            raise ValueError("need 0 < backoff_factor < 1, growth_interval > 0, hysteresis > 0")
        self.scale = float(initial_scale)
        self.min_scale, self.growth_factor = float(min_scale), float(growth_factor)
        self.backoff_factor, self.growth_interval = float(backoff_factor), growth_interval
        self.hysteresis = hysteresis
        self.growth_tracker, self.hysteresis_tracker = 0, hysteresis

    def update(self, found_inf: bool) -> None:
        if found_inf:
            self.growth_tracker = 0
            self.hysteresis_tracker -= 1
            if self.hysteresis_tracker <= 0:
                self.scale = max(self.scale * self.backoff_factor, self.min_scale)
        else:
            self.growth_tracker += 1
            if self.growth_tracker == self.growth_interval:
                self.growth_tracker = 0
                self.hysteresis_tracker = self.hysteresis
                self.scale *= self.growth_factor


def unscale_and_check(grads: Sequence[torch.Tensor], scale: float) -> bool:
    """Divide ``grads`` by ``scale`` in place; True if any element is inf or NaN."""
    found = False
    for g in grads:
        g.mul_(1.0 / scale)
        found = found or not bool(torch.isfinite(g).all())
    return found


def global_grad_norm(
    grads: Iterable[torch.Tensor], group: dist.ProcessGroup | None = None
) -> float:
    """The 2-norm of all gradients taken as one vector, over every rank of ``group``.

    Each rank sums the squares of the elements it owns; the sums are added across ranks, and
    the square root is taken once. (A norm per rank cannot be combined any other way.)
    """
    sq = torch.zeros((), dtype=torch.float64)
    for g in grads:
        sq += g.double().pow(2).sum()
    if group is not None or (dist.is_available() and dist.is_initialized()):
        dist.all_reduce(sq, group=group)
    return math.sqrt(float(sq))


def clip_by_global_norm(grads: Iterable[torch.Tensor], max_norm: float, total_norm: float) -> float:
    """Scale ``grads`` in place by ``max_norm / total_norm`` when that is below one."""
    coeff = max_norm / (total_norm + 1.0e-6)
    if coeff < 1.0:
        for g in grads:
            g.mul_(coeff)
    return min(coeff, 1.0)


class MixedPrecisionAdam:
    """Adam on fp32 main parameters for a model whose parameters are 16-bit.

    ``scaler``: a :class:`DynamicLossScaler` (fp16) or None (bf16, whose range needs no
    scaling). ``clip_grad``: the global-norm threshold (0 disables clipping). ``group``: the
    process group whose ranks together hold the gradients (for the norm), None for one process.
    """

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.95),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        clip_grad: float = 1.0,
        scaler: DynamicLossScaler | None = None,
        group: dist.ProcessGroup | None = None,
    ) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.scaler, self.clip_grad, self.group = scaler, clip_grad, group
        # fp32 gradient buffer the backward pass accumulates into (Megatron's main_grad)
        self.main_grads = [torch.zeros(p.shape, dtype=torch.float32) for p in self.params]
        # fp32 main copy of each 16-bit parameter: the optimizer updates these
        self.main_params = [p.detach().clone().float() for p in self.params]
        self.adam = torch.optim.AdamW(
            self.main_params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay
        )
        for p, buf in zip(self.params, self.main_grads, strict=True):
            p.register_post_accumulate_grad_hook(self._accumulate_into(buf))

    @staticmethod
    def _accumulate_into(buf: torch.Tensor):  # noqa: ANN205 - a hook
        def hook(p: torch.Tensor) -> None:
            buf.add_(p.grad.float())  # 16-bit gradient added into the fp32 buffer
            p.grad = None  # the 16-bit gradient is not kept

        return hook

    def scale_loss(self, loss: torch.Tensor) -> torch.Tensor:
        return loss * self.scaler.scale if self.scaler is not None else loss

    def zero_grad(self) -> None:
        for buf in self.main_grads:
            buf.zero_()

    @torch.no_grad()
    def step(self) -> tuple[bool, float | None]:
        """One update. Returns ``(applied, grad_norm)``; ``(False, None)`` when skipped."""
        for main, buf in zip(self.main_params, self.main_grads, strict=True):
            main.grad = buf  # the fp32 buffer itself: no copy
        grads = [m.grad for m in self.main_params]
        if self.scaler is not None:
            found_inf = unscale_and_check(grads, self.scaler.scale)
            if self.group is not None or (dist.is_available() and dist.is_initialized()):
                flag = torch.tensor(float(found_inf))
                dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=self.group)
                found_inf = bool(flag)
            self.scaler.update(found_inf)
            if found_inf:
                return False, None  # skip: parameters and Adam moments are untouched
        norm = global_grad_norm(grads, self.group)
        if self.clip_grad > 0.0:
            clip_by_global_norm(grads, self.clip_grad, norm)
        self.adam.step()
        for p, main in zip(self.params, self.main_params, strict=True):
            p.copy_(main)  # round the fp32 main value to the 16-bit model parameter
        return True, norm

    def state_tensors(self) -> dict[str, list[torch.Tensor]]:
        """The real tensors this optimizer and its model keep, by role."""
        state = [self.adam.state[m] for m in self.main_params if m in self.adam.state]
        return {
            "model params": list(self.params),
            "main grads": list(self.main_grads),
            "main params": list(self.main_params),
            "adam m": [s["exp_avg"] for s in state],
            "adam v": [s["exp_avg_sq"] for s in state],
        }


def bytes_per_param(
    param_bytes: int, grad_bytes: int, dp: int = 1, distributed: bool = False
) -> float:
    """Bytes a rank keeps per parameter for Adam, Megatron-LM's ledger.

    Kept whole on every rank: the model parameter and its gradient. Divided by ``dp`` when the
    optimizer is distributed: Adam's two fp32 moments (8 bytes), the fp32 main parameter when
    the model parameter is 16-bit (4), and an fp32 main gradient when the gradient is 16-bit (4).
    """
    sharded = 8 + (4 if param_bytes < 4 else 0) + (4 if grad_bytes < 4 else 0)
    return param_bytes + grad_bytes + (sharded / dp if distributed else sharded)


@dataclass(frozen=True)
class ParamRange:
    """Where one parameter's piece lies: in the whole buffer (``world``), in this rank's shard
    (``local``), and within the parameter itself (``param``); half-open ``(start, end)``."""

    world: tuple[int, int]
    local: tuple[int, int]
    param: tuple[int, int]


PARAM_ALIGN = 64  # Megatron-LM starts every parameter of a bucket at a multiple of 64 elements
BUCKET_ALIGN = 128  # and pads the bucket's end to a multiple of lcm(dp, 128)


def shard_ranges(
    numels: Sequence[int], dp: int, rank: int
) -> tuple[tuple[int, int], list[ParamRange | None]]:
    """Cut the bucket that holds ``numels`` (in buffer order) into ``dp`` equal shards.

    As in Megatron-LM's distributed optimizer, each parameter starts at a multiple of
    ``PARAM_ALIGN`` elements and the bucket's end is padded to a multiple of
    ``lcm(dp, BUCKET_ALIGN)``, so that it divides into ``dp`` equal shards; rank ``r`` owns
    ``[r n/dp, (r+1) n/dp)``. Shards ignore parameter boundaries, so a parameter can be split
    across ranks. Returns this rank's shard and, per parameter, the overlap with it (None where
    there is none).
    """
    starts, end = [], 0
    for n in numels:
        start = -(-end // PARAM_ALIGN) * PARAM_ALIGN
        starts.append(start)
        end = start + n
    divisor = math.lcm(dp, BUCKET_ALIGN)
    size = -(-end // divisor) * divisor // dp
    lo, hi = rank * size, (rank + 1) * size
    out: list[ParamRange | None] = []
    for start, n in zip(starts, numels, strict=True):
        a, b = max(start, lo), min(start + n, hi)
        out.append(ParamRange((a, b), (a - lo, b - lo), (a - start, b - start)) if b > a else None)
    return (lo, hi), out
