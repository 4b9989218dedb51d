"""Checks of the labs of ``kernels/triton-basics.md``.

The chapter's checks: memory traces, upstream kernels at their pins, references.
"""

from __future__ import annotations

import torch
import triton

from atlas.labkit.checks.kernels.common import load_fla_kernel

ROLE = "check"


def fla_layer_norm(x, weight, bias, eps: float = 1e-5):
    """fla's ``layer_norm_fwd_kernel1`` at the pin (one program per row), without autotune."""
    kernel = load_fla_kernel("fla/modules/layernorm.py", "layer_norm_fwd_kernel1")
    rows, D = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(rows, dtype=torch.float32)
    rstd = torch.empty(rows, dtype=torch.float32)
    kernel[(rows,)](
        x,
        y,
        weight,
        bias,
        None,
        None,
        mean,
        rstd,
        eps,
        G=1,
        D=D,
        BD=triton.next_power_of_2(D),
        IS_RMS_NORM=False,
        HAS_RESIDUAL=False,
        STORE_RESIDUAL_OUT=False,
        HAS_WEIGHT=True,
        HAS_BIAS=True,
    )
    return y, mean, rstd
