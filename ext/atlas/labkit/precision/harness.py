"""What checks the low-precision chapter's code: upstream functions run from their pinned
sources, test tensors, and error metrics.

The upstream code runs from the book's pins, never from an installed package:

* DeepGEMM's ``deep_gemm/utils/math.py`` (per-token, per-block and FP4 casts), read from the
  git objects at the pin and executed (it needs only torch);
* GPTQ's ``GPTQ.fasterquant`` and ``quantize`` / ``Quantizer`` (IST-DASLab/gptq), with a stub
  for the ``transformers`` module it only type-checks against and a CPU ``torch.cuda``;
* llm-awq's ``pseudo_quantize_tensor``, the scale search nested in ``auto_scale_block`` and
  SmoothQuant's ``smooth_ln_fcs``;
* torch's own pure-PyTorch MX and NVFP4 quantizers, ported from torchao and shipped in the
  wheel as ``torch/_vendor/quack/mx_utils.py`` (loaded from that file alone: the package's
  ``__init__`` needs CUDA).

A missing upstream raises :class:`UpstreamUnavailable`, a ``SkipTest``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import math
import os
import types
import typing
from typing import Any

import torch

from atlas.labkit.pinned import UpstreamUnavailable, definitions, drop_all

# Their decorators (``torch.no_grad()`` and the like) are not needed to run them here.
upstream_defs = functools.partial(definitions, decorators=drop_all)


# ---------------------------------------------------------------------------------------------
# DeepGEMM
# ---------------------------------------------------------------------------------------------


@functools.cache
def deepgemm_math() -> types.SimpleNamespace:
    """DeepGEMM's ``deep_gemm/utils/math.py`` at the pin: the FP8 and FP4 casts it tests with."""
    names = ("ceil_div", "align", "ceil_to_ue8m0", "pack_ue8m0_to_int", "per_token_cast_to_fp8",
             "per_block_cast_to_fp8", "_quantize_to_fp4_e2m1", "per_token_cast_to_fp4",
             "_dequantize_from_fp4_e2m1", "cast_back_from_fp4")
    namespace = {"torch": torch, "Tuple": typing.Tuple}  # noqa: UP006 (its annotations use it)
    scope = upstream_defs("deepgemm", "deep_gemm/utils/math.py", names, namespace)
    return types.SimpleNamespace(**{n: scope[n] for n in names})


# ---------------------------------------------------------------------------------------------
# torch's vendored MX / NVFP4 quantizers (a package upstream)
# ---------------------------------------------------------------------------------------------


@functools.cache
def torch_mx_utils() -> types.ModuleType:
    """``torch/_vendor/quack/mx_utils.py`` of the installed torch, loaded from its file."""
    path = os.path.join(os.path.dirname(torch.__file__), "_vendor", "quack", "mx_utils.py")
    if not os.path.exists(path):
        raise UpstreamUnavailable(f"{path} is not in this torch ({torch.__version__})")
    spec = importlib.util.spec_from_file_location("torch_vendor_quack_mx_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def unpack_fp4(packed: torch.Tensor) -> torch.Tensor:
    """Two E2M1 codes per byte (first in the low nibble) to their values, decoded by our
    :class:`~atlas.labkit.precision.formats.FloatFormat`."""
    from atlas.labkit.precision.formats import E2M1

    table = torch.tensor([E2M1.decode(c) for c in range(16)])
    codes = torch.stack([packed & 0xF, packed >> 4], dim=-1).reshape(*packed.shape[:-1], -1)
    return table[codes.long()]


# ---------------------------------------------------------------------------------------------
# GPTQ and llm-awq
# ---------------------------------------------------------------------------------------------


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
    quant = upstream_defs("gptq", "quant.py", ("quantize", "Quantizer"),
                          {"torch": torch, "nn": torch.nn})
    return upstream_defs("gptq", "gptq.py", ("GPTQ",), {
        "torch": _CPUTorch(), "nn": torch.nn, "math": math, "time": __import__("time"),
        "transformers": _TRANSFORMERS_STUB, "DEBUG": False,
        "quantize": quant["quantize"], "Quantizer": quant["Quantizer"],
    })


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
    quantizer = upstream_defs("awq", "awq/quantize/quantizer.py", ("pseudo_quantize_tensor",),
                              {"torch": torch})
    scale = upstream_defs("awq", "awq/quantize/auto_scale.py",
                          ("get_act_scale", "auto_scale_block._search_module_scale"),
                          {"torch": torch, "nn": torch.nn})
    smooth = upstream_defs("awq", "awq/quantize/smooth.py", ("smooth_ln_fcs",),
                           {"torch": torch, "nn": torch.nn})
    return {**quantizer, **scale, "smooth_ln_fcs": smooth["smooth_ln_fcs"]}


def awq_pseudo_quantize(w: torch.Tensor, bits: int = 4, group: int = 128) -> torch.Tensor:
    """llm-awq's ``pseudo_quantize_tensor`` at the pin (asymmetric, with zero point)."""
    return _awq_scope()["pseudo_quantize_tensor"](w.clone(), n_bit=bits, zero_point=True,
                                                  q_group_size=group)


def awq_upstream_scales(
    w: torch.Tensor, x: torch.Tensor, bits: int = 4, group: int = 128
) -> torch.Tensor:
    """The scales llm-awq's ``_search_module_scale`` (nested in ``auto_scale_block``) picks for
    one linear layer with weight ``w`` on inputs ``x``."""
    scope = _awq_scope()
    quantize = scope["pseudo_quantize_tensor"]
    scope["_search_module_scale"].__globals__["w_quantize_func"] = (
        lambda p: quantize(p, n_bit=bits, zero_point=True, q_group_size=group).detach()
    )
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


# ---------------------------------------------------------------------------------------------
# Test tensors and metrics
# ---------------------------------------------------------------------------------------------


def outlier_activations(
    tokens: int = 512, channels: int = 1024, outliers: tuple[int, ...] = (7, 300, 901),
    factor: float = 50.0, seed: int = 0,
) -> torch.Tensor:
    """Gaussian activations with a few channels ``factor`` times larger in every token, the
    pattern LLM.int8() and SmoothQuant report in LLM activations."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, channels, generator=g)
    x[:, list(outliers)] *= factor
    return x


def correlated_inputs(n: int, dim: int, seed: int = 0, spread: float = 4.0) -> torch.Tensor:
    """Calibration inputs whose channels are correlated and of unequal size: Gaussian noise
    through a random mixing matrix, then per-channel magnitudes spread over ``e^±spread/2``."""
    g = torch.Generator().manual_seed(seed)
    mix = torch.randn(dim, dim, generator=g) / math.sqrt(dim)
    mags = torch.exp((torch.rand(dim, generator=g) - 0.5) * spread)
    return (torch.randn(n, dim, generator=g) @ mix) * mags


def rel_error(approx: torch.Tensor, exact: torch.Tensor) -> float:
    """``||approx - exact|| / ||exact||`` (Frobenius), in float64."""
    return ((approx.double() - exact.double()).norm() / exact.double().norm()).item()


def predicted_rounding_mse(x: torch.Tensor, ulp: torch.Tensor) -> float:
    """The mean squared error of rounding to nearest if each error is uniform over its own
    grid spacing ``ulp``: ``mean(ulp^2) / 12``. A closed form, no rounding performed."""
    return (ulp.double() ** 2 / 12).mean().item()


def mean_truncation_bias(adds: int, bits: int) -> float:
    """Expected relative shortfall of a sum of ``adds`` equal positive terms whose running
    total is truncated to ``bits`` significant bits after every add.

    After add ``j`` the total is about ``j c``; truncation drops a uniform fraction of one
    ulp, ``2^(1 - bits)`` times the total over its mantissa ``m``, and ``E[1/m] = 1 / (2 ln 2)``
    for the log-uniform mantissas of a growing sum: an expected loss of
    ``2^-bits / (2 ln 2) * j c``. Summed over ``j = 1..adds`` and divided by the total
    ``adds * c``: ``2^-bits / (2 ln 2) * (adds + 1) / 2``.
    """
    return 2.0**-bits / (2 * math.log(2)) * (adds + 1) / 2
