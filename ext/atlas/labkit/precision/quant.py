"""Post-training quantization for inference: round-to-nearest, GPTQ, AWQ, SmoothQuant.

Weight-only methods store ``W`` (``[out, in]``) as ``b``-bit integers with one scale and one
zero point per ``group`` consecutive input channels of a row (asymmetric, as GPTQ and AWQ
store them): ``q = clamp(round(w / scale) + zero, 0, 2^b - 1)``, ``w ≈ scale * (q - zero)``.

* :func:`rtn` rounds every weight to its nearest grid point independently.
* :func:`gptq` quantizes the input channels one at a time and pushes each column's rounding
  error onto the columns not yet quantized, weighted by the inverse Hessian of the layer's
  output error, ``H = 2 X^T X`` (Frantar et al.).
* :func:`awq_search` multiplies the input channels by ``s = mean|x|^alpha`` before rounding
  (and divides the activations by it), choosing ``alpha`` on a grid by the output error
  (Lin et al.).
* :func:`smoothquant` moves activation outliers into the weights with
  ``s_j = max|x_j|^alpha / max|w_j|^(1 - alpha)`` so that both can use 8-bit per-tensor or
  per-token scales (Xiao et al.).
"""

from __future__ import annotations

import torch

ROLE = "taught"


def minmax_params(w: torch.Tensor, bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Asymmetric scale and zero point per row of ``w``, its range widened to include 0."""
    maxq = 2**bits - 1
    wmin = w.min(dim=1, keepdim=True).values.clamp(max=0)
    wmax = w.max(dim=1, keepdim=True).values.clamp(min=0)
    both_zero = (wmin == 0) & (wmax == 0)
    wmin, wmax = torch.where(both_zero, -1.0, wmin), torch.where(both_zero, 1.0, wmax)
    scale = (wmax - wmin) / maxq
    return scale, torch.round(-wmin / scale)


def fake_quant(w: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor, bits: int) -> torch.Tensor:
    """Round onto the grid ``scale * (q - zero)``, ``q`` in ``[0, 2^bits - 1]``."""
    q = torch.clamp(torch.round(w / scale) + zero, 0, 2**bits - 1)
    return scale * (q - zero)


def rtn(w: torch.Tensor, bits: int = 4, group: int = 128) -> torch.Tensor:
    """Round-to-nearest with one (scale, zero) per ``group`` input channels of each row."""
    out, cols = w.shape
    wg = w.float().reshape(out * cols // group, group)
    scale, zero = minmax_params(wg, bits)
    return fake_quant(wg, scale, zero, bits).reshape(out, cols)


def gptq(
    w: torch.Tensor,
    h: torch.Tensor,
    bits: int = 4,
    group: int = 128,
    blocksize: int = 128,
    percdamp: float = 0.01,
) -> torch.Tensor:
    """GPTQ: quantize columns left to right, feeding each one's error forward through ``H^-1``.

    ``h`` is the ``[in, in]`` Hessian ``2 X^T X / n`` of the calibration inputs. The inverse is
    taken once, as the upper Cholesky factor ``U`` of ``(H + damp I)^-1``; row ``i`` of ``U``
    holds, from its diagonal on, how column ``i``'s error should move the columns after it.
    Columns are processed in blocks of ``blocksize``: inside a block the update is applied
    column by column, to the rest of the matrix once per block (the same arithmetic, grouped
    so that it runs as matrix products).
    """
    w = w.float().clone()
    h = h.float().clone()
    cols = w.shape[1]
    dead = torch.diag(h) == 0  # inputs that are always zero: any weight will do
    h[dead, dead] = 1
    w[:, dead] = 0
    h += percdamp * torch.mean(torch.diag(h)) * torch.eye(cols)
    u = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)
    q_all = torch.zeros_like(w)
    scale = zero = None
    for b0 in range(0, cols, blocksize):
        b1 = min(b0 + blocksize, cols)
        wb, ub = w[:, b0:b1].clone(), u[b0:b1, b0:b1]
        err = torch.zeros_like(wb)
        for i in range(b1 - b0):
            if (b0 + i) % group == 0:  # a new group: its grid from the weights as updated so far
                scale, zero = minmax_params(
                    w[:, b0 + i : b0 + i + group] if i == 0 else wb[:, i : i + group], bits
                )
            col = wb[:, i]
            q = fake_quant(col.unsqueeze(1), scale, zero, bits).flatten()
            q_all[:, b0 + i] = q
            e = (col - q) / ub[i, i]
            wb[:, i:] -= e.unsqueeze(1) @ ub[i, i:].unsqueeze(0)  # error feedback inside the block
            err[:, i] = e
        w[:, b1:] -= err @ u[b0:b1, b1:]  # and to every column after the block, at once
    return q_all


def awq_search(
    w: torch.Tensor, x: torch.Tensor, bits: int = 4, group: int = 128, n_grid: int = 20
) -> tuple[torch.Tensor, float]:
    """AWQ's per-input-channel scales: try ``s = mean|x|^alpha`` for ``alpha`` in
    ``0, 1/n_grid, ...``, quantize ``W * s`` and undo ``s``, keep the ``alpha`` whose output
    ``x @ (Q(W s) / s)^T`` is closest to ``x @ W^T``. Returns ``(s, alpha)``."""
    ref = x @ w.T
    x_mean = x.abs().view(-1, x.shape[-1]).mean(0)
    best, best_s, best_alpha = float("inf"), None, -1.0
    for i in range(n_grid):
        alpha = i / n_grid
        s = x_mean.pow(alpha).clamp(min=1e-4)
        s = s / (s.max() * s.min()).sqrt()  # centre the scales around 1
        wq = rtn(w * s.view(1, -1), bits, group) / s.view(1, -1)
        loss = (ref - x @ wq.T).float().pow(2).mean().item()
        if loss < best:
            best, best_s, best_alpha = loss, s, alpha
    return best_s, best_alpha


def smoothquant(act_amax: torch.Tensor, w: torch.Tensor, alpha: float = 0.5) -> torch.Tensor:
    """SmoothQuant's per-input-channel factors ``s_j = max|x_j|^alpha / max|w_j|^(1-alpha)``;
    the layer then computes ``(x / s) @ (W * s)^T``, the same product."""
    w_amax = w.abs().amax(dim=0).clamp(min=1e-5)
    return (act_amax.pow(alpha) / w_amax.pow(1 - alpha)).clamp(min=1e-5)
