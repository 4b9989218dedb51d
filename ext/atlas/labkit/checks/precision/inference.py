"""Checks of the labs of ``precision/inference.md``.

The chapter's checks: upstream functions run from their pinned sources, test tensors, and error
metrics.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import types
from typing import Any

import torch

from atlas.labkit.checks.precision.common import upstream_defs

ROLE = "check"


class _CPUTorch(types.ModuleType):
    """``torch`` whose ``cuda.synchronize`` and ``cuda.empty_cache`` do nothing."""

    def __init__(self) -> None:
        super().__init__("torch")
        self.cuda = types.SimpleNamespace(synchronize=lambda: None, empty_cache=lambda: None)

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)


_TRANSFORMERS_STUB = types.SimpleNamespace(Conv1D=type("Conv1D", (), {}))


@functools.cache
def _gptq_scope() -> dict:
    quant = upstream_defs(
        "gptq", "quant.py", ("quantize", "Quantizer"), {"torch": torch, "nn": torch.nn}
    )
    return upstream_defs(
        "gptq",
        "gptq.py",
        ("GPTQ",),
        {
            "torch": _CPUTorch(),
            "nn": torch.nn,
            "math": math,
            "time": __import__("time"),
            "transformers": _TRANSFORMERS_STUB,
            "DEBUG": False,
            "quantize": quant["quantize"],
            "Quantizer": quant["Quantizer"],
        },
    )


def gptq_upstream(
    w: torch.Tensor, x: torch.Tensor, bits: int = 4, group: int = 128
) -> torch.Tensor:
    """GPTQ's own ``add_batch`` and ``fasterquant`` at the pin on a linear layer with weight
    ``w`` and calibration inputs ``x`` (``[n, in]``): the dequantized weights it writes back."""
    scope = _gptq_scope()
    layer = torch.nn.Linear(w.shape[1], w.shape[0], bias=False)
    layer.weight.data = w.float().clone()
    g = scope["GPTQ"](layer)
    g.quantizer = scope["Quantizer"]()
    g.quantizer.configure(bits, perchannel=True, sym=False, mse=False)
    g.add_batch(x.float(), None)
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its time and error
        g.fasterquant(blocksize=128, percdamp=0.01, groupsize=group)
    return layer.weight.data.clone()


def hessian(x: torch.Tensor) -> torch.Tensor:
    """``2 X^T X / n``, the Hessian of the squared output error in the weights of one row."""
    return 2 * x.float().T @ x.float() / x.shape[0]


@functools.cache
def _awq_scope() -> dict:
    quantizer = upstream_defs(
        "awq", "awq/quantize/quantizer.py", ("pseudo_quantize_tensor",), {"torch": torch}
    )
    scale = upstream_defs(
        "awq",
        "awq/quantize/auto_scale.py",
        ("get_act_scale", "auto_scale_block._search_module_scale"),
        {"torch": torch, "nn": torch.nn},
    )
    smooth = upstream_defs(
        "awq", "awq/quantize/smooth.py", ("smooth_ln_fcs",), {"torch": torch, "nn": torch.nn}
    )
    return {**quantizer, **scale, "smooth_ln_fcs": smooth["smooth_ln_fcs"]}


def awq_pseudo_quantize(w: torch.Tensor, bits: int = 4, group: int = 128) -> torch.Tensor:
    """llm-awq's ``pseudo_quantize_tensor`` at the pin (asymmetric, with zero point)."""
    return _awq_scope()["pseudo_quantize_tensor"](
        w.clone(), n_bit=bits, zero_point=True, q_group_size=group
    )


def awq_upstream_scales(
    w: torch.Tensor, x: torch.Tensor, bits: int = 4, group: int = 128
) -> torch.Tensor:
    """The scales llm-awq's ``_search_module_scale`` (nested in ``auto_scale_block``) picks for
    one linear layer with weight ``w`` on inputs ``x``."""
    scope = _awq_scope()
    quantize = scope["pseudo_quantize_tensor"]
    scope["_search_module_scale"].__globals__["w_quantize_func"] = lambda p: quantize(
        p, n_bit=bits, zero_point=True, q_group_size=group
    ).detach()
    layer = torch.nn.Linear(w.shape[1], w.shape[0], bias=False)
    layer.weight.data = w.float().clone()
    with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()):
        return scope["_search_module_scale"](layer, [layer], x.float())


def smoothquant_upstream(
    act_amax: torch.Tensor, w: torch.Tensor, alpha: float = 0.5
) -> torch.Tensor:
    """The factors llm-awq's ``smooth_ln_fcs`` (SmoothQuant) applies, read back from the layer
    it rescales: ``W_after / W_before`` per input channel."""
    ln = torch.nn.LayerNorm(w.shape[1])
    fc = torch.nn.Linear(w.shape[1], w.shape[0], bias=False)
    fc.weight.data = w.float().clone()
    with torch.no_grad():
        _awq_scope()["smooth_ln_fcs"](ln, fc, act_amax.float(), alpha)
    return (fc.weight.data / w.float())[0]


def correlated_inputs(n: int, dim: int, seed: int = 0, spread: float = 4.0) -> torch.Tensor:
    """Calibration inputs whose channels are correlated and of unequal size: Gaussian noise
    through a random mixing matrix, then per-channel magnitudes spread over ``e^±spread/2``."""
    g = torch.Generator().manual_seed(seed)
    mix = torch.randn(dim, dim, generator=g) / math.sqrt(dim)
    mags = torch.exp((torch.rand(dim, generator=g) - 0.5) * spread)
    return (torch.randn(n, dim, generator=g) @ mix) * mags
