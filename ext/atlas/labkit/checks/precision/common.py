"""Checking code that several pages of the precision chapter share: ``precision/formats.md``,
``precision/fp4.md``, ``precision/fp8-training.md``, ``precision/index.md``,
``precision/inference.md``, ``precision/problems.md``, ``precision/scaling.md``.

The chapter's checks: upstream functions run from their pinned sources, test tensors, and error
metrics.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
import types
import typing

import torch

from atlas.labkit.pinned import UpstreamUnavailable, definitions, drop_all

ROLE = "check"


# Their decorators (``torch.no_grad()`` and the like) are not needed to run them here.
upstream_defs = functools.partial(definitions, decorators=drop_all)


@functools.cache
def deepgemm_math() -> types.SimpleNamespace:
    """DeepGEMM's ``deep_gemm/utils/math.py`` at the pin: the FP8 and FP4 casts it tests with."""
    names = (
        "ceil_div",
        "align",
        "ceil_to_ue8m0",
        "pack_ue8m0_to_int",
        "per_token_cast_to_fp8",
        "per_block_cast_to_fp8",
        "_quantize_to_fp4_e2m1",
        "per_token_cast_to_fp4",
        "_dequantize_from_fp4_e2m1",
        "cast_back_from_fp4",
    )
    namespace = {"torch": torch, "Tuple": typing.Tuple}  # noqa: UP006 (its annotations use it)
    scope = upstream_defs("deepgemm", "deep_gemm/utils/math.py", names, namespace)
    return types.SimpleNamespace(**{n: scope[n] for n in names})


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


def outlier_activations(
    tokens: int = 512,
    channels: int = 1024,
    outliers: tuple[int, ...] = (7, 300, 901),
    factor: float = 50.0,
    seed: int = 0,
) -> torch.Tensor:
    """Gaussian activations with a few channels ``factor`` times larger in every token, the
    pattern LLM.int8() and SmoothQuant report in LLM activations."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, channels, generator=g)
    x[:, list(outliers)] *= factor
    return x


def rel_error(approx: torch.Tensor, exact: torch.Tensor) -> float:
    """``||approx - exact|| / ||exact||`` (Frobenius), in float64."""
    return ((approx.double() - exact.double()).norm() / exact.double().norm()).item()


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
