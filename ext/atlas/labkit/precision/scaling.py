"""Scaled quantization at every granularity, and delayed against current scaling.

A low-precision tensor is a pair: values ``q`` on the format's grid and scales ``s``, one per
group of elements, with ``x ≈ q * s``. The granularity is the shape of the group. For an
``[M, K]`` operand of a GEMM that contracts over ``K``:

* per tensor: one scale; the group is ``[M, K]``;
* per token (row): ``[1, K]``; per channel (column): ``[M, 1]``;
* per tile: ``[1, 128]`` (DeepSeek-V3's activations); per block: ``[128, 128]`` (its
  weights); MX formats use ``[1, 32]``, NVFP4 ``[1, 16]``.

Each scale maps the group's largest magnitude (its *amax*) onto the format's largest value:
``s = amax / fmt_max``. :func:`quantize_blocks` does this for any group shape, rounding with
torch's real FP8 casts where the format has a torch dtype and with
:func:`~atlas.labkit.precision.formats.round_to_format` otherwise.
"""

from __future__ import annotations

import torch

from atlas.labkit.precision.formats import E4M3, E5M2, FloatFormat, round_to_format

ROLE = "taught"

TORCH_DTYPES = {E4M3.name: torch.float8_e4m3fn, E5M2.name: torch.float8_e5m2}


def to_grid(y: torch.Tensor, fmt: FloatFormat | int) -> torch.Tensor:
    """Round already-scaled values onto a format (saturating): a float format or ``b``-bit int."""
    if isinstance(fmt, int):  # symmetric integers, e.g. 8 -> [-127, 127]
        qmax = 2 ** (fmt - 1) - 1
        return torch.round(y).clamp(-qmax, qmax)
    if fmt.name in TORCH_DTYPES:  # the real cast, clamped first: saturate in any case
        return y.float().clamp(-fmt.max, fmt.max).to(TORCH_DTYPES[fmt.name]).float()
    return round_to_format(y, fmt).float()


def grid_max(fmt: FloatFormat | int) -> float:
    return float(2 ** (fmt - 1) - 1) if isinstance(fmt, int) else fmt.max


def quantize_blocks(
    x: torch.Tensor, fmt: FloatFormat | int, block: tuple[int, int], pow2_scales: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Quantize a 2-D ``x`` with one scale per ``block = (rows, cols)`` group.

    Returns ``(q, s)``: ``q`` has ``x``'s shape (values on the grid), ``s`` has one entry per
    group. A block dimension of ``-1`` spans the whole axis. The amax is clamped at ``1e-4``
    so that an all-zero group gets a finite scale; ``pow2_scales`` rounds each scale *up* to
    a power of two (the UE8M0 scales of DeepGEMM on Blackwell).
    """
    m, k = x.shape
    br, bc = (m if block[0] == -1 else block[0]), (k if block[1] == -1 else block[1])
    pm, pk = -(-m // br) * br, -(-k // bc) * bc
    padded = torch.zeros(pm, pk, dtype=torch.float32)
    padded[:m, :k] = x.float()
    view = padded.view(pm // br, br, pk // bc, bc)
    amax = view.abs().amax(dim=(1, 3), keepdim=True).clamp(min=1e-4)
    s = amax / grid_max(fmt)
    if pow2_scales:  # float64 log2: exact enough that a scale just above 2^k rounds up
        s = torch.exp2(torch.ceil(torch.log2(s.double()))).float()
    q = to_grid(view * (1.0 / s), fmt)
    return q.view(pm, pk)[:m, :k], s.view(pm // br, pk // bc)


def dequantize_blocks(q: torch.Tensor, s: torch.Tensor, block: tuple[int, int]) -> torch.Tensor:
    """``q * s`` with each scale broadcast over its group."""
    m, k = q.shape
    br, bc = (m if block[0] == -1 else block[0]), (k if block[1] == -1 else block[1])
    full = s.repeat_interleave(br, dim=0).repeat_interleave(bc, dim=1)
    return q * full[:m, :k]


GRANULARITIES = {
    "tensor": (-1, -1),
    "token": (1, -1),
    "channel": (-1, 1),
    "tile 1x128": (1, 128),
    "block 128x128": (128, 128),
}


class DelayedScaler:
    """Transformer Engine's delayed scaling: the scale of step ``t`` comes from the amaxes of
    earlier steps, kept in a history of ``history_len`` entries, reduced by ``"max"`` or
    ``"most_recent"``; ``margin`` leaves ``2^margin`` of headroom.

    ``scale_for_step`` is what the cast of this step must use; ``record`` adds the amax the
    step actually saw. Current scaling is the same cast with the step's own amax.
    """

    def __init__(self, fmt: FloatFormat, history_len: int = 16, algo: str = "max", margin: int = 0):
        self.fmt, self.history_len, self.algo, self.margin = fmt, history_len, algo, margin
        self.history: list[float] = []

    def scale_for_step(self) -> float:
        if not self.history:
            return 1.0
        amax = max(self.history) if self.algo == "max" else self.history[-1]
        return amax * 2.0**self.margin / self.fmt.max

    def record(self, amax: float) -> None:
        self.history = (self.history + [amax])[-self.history_len :]
