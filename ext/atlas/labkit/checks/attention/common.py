"""Checking code that several pages of the attention chapter share: ``attention/decode.md``,
``attention/flash-attention-2-3.md``, ``attention/flash-attention.md``, ``attention/index.md``,
``attention/linear.md``, ``attention/mla.md``, ``attention/sparse.md``.

The chapter's checks: What the attention labs need but the pages do not teach.
"""

from __future__ import annotations

import math
import re
import types

import torch

from atlas.labkit.pinned import module

ROLE = "check"


def randn(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """A standard normal tensor from its own generator (labs never touch the global seed)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype)


def qkv(
    m: int, n: int, d: int, dv: int | None = None, *, lead: tuple[int, ...] = (), seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Queries ``[*lead, m, d]``, keys ``[*lead, n, d]``, values ``[*lead, n, dv]``."""
    dv = d if dv is None else dv
    return (
        randn(*lead, m, d, seed=seed),
        randn(*lead, n, d, seed=seed + 1),
        randn(*lead, n, dv, seed=seed + 2),
    )


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


def reference_attention(q, k, v, causal=False, allowed=None, scale=None):
    """PyTorch's own ``scaled_dot_product_attention`` (its math path on CPU): the independent
    reference the chapter's labs compare against. ``q`` ``[..., M, d]``, ``k`` and ``v``
    ``[..., N, d]``; ``allowed`` a boolean ``[M, N]`` mask (True: may attend); a causal mask is
    aligned to the last query, as in FlashAttention. Rows with no allowed key give zeros."""
    m, n = q.shape[-2], k.shape[-2]
    mask = torch.ones(m, n, dtype=torch.bool)
    if causal:
        mask &= torch.arange(n)[None, :] <= torch.arange(m)[:, None] + (n - m)
    if allowed is not None:
        mask &= allowed
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    return out.nan_to_num(0.0) * mask.any(dim=-1, keepdim=True)


# -- a small einops ---------------------------------------------------------------------------
_TOKEN = re.compile(r"\(|\)|\.\.\.|[A-Za-z_][A-Za-z0-9_]*|\d+")


def _groups(side: str) -> list[list[str]]:
    groups: list[list[str]] = []
    current: list[str] | None = None
    for tok in _TOKEN.findall(side):
        if tok == "(":
            current = []
        elif tok == ")":
            assert current is not None
            groups.append(current)
            current = None
        else:
            names = [] if tok == "1" else [tok]
            if current is None:
                groups.append(names)
            else:
                current.extend(names)
    return groups


def _expand_ellipsis(groups: list[list[str]], n: int) -> list[list[str]]:
    out: list[list[str]] = []
    for g in groups:
        if g == ["..."]:
            out.extend([[f"_e{i}"] for i in range(n)])
        else:
            out.append(g)
    return out


def _einops(x: torch.Tensor, pattern: str, sizes: dict[str, int], allow_new: bool) -> torch.Tensor:
    left_s, right_s = pattern.split("->")
    left, right = _groups(left_s), _groups(right_s)
    n_ellipsis = x.ndim - (len(left) - 1) if ["..."] in left else 0
    left, right = _expand_ellipsis(left, n_ellipsis), _expand_ellipsis(right, n_ellipsis)
    if len(left) != x.ndim:
        raise ValueError(f"pattern {pattern!r} does not match a tensor of shape {tuple(x.shape)}")
    known = dict(sizes)
    for g, dim in zip(left, x.shape, strict=True):
        unknown = [n for n in g if n not in known]
        prod = math.prod(known[n] for n in g if n in known)
        if len(unknown) == 1:
            known[unknown[0]] = dim // prod
        elif math.prod(known[n] for n in g) != dim:
            raise ValueError(f"axis group {g} of {pattern!r} does not have size {dim}")
    left_names = [n for g in left for n in g]
    right_names = [n for g in right for n in g]
    new = [n for n in right_names if n not in left_names]
    if new and not allow_new:
        raise ValueError(f"rearrange cannot create axes {new}")
    if [n for n in left_names if n not in right_names]:
        raise ValueError(f"{pattern!r} drops axes")
    y = x.reshape([known[n] for n in left_names])
    y = y.permute([left_names.index(n) for n in right_names if n in left_names])
    current = [n for n in right_names if n in left_names]
    for pos, name in enumerate(right_names):
        if name in new:
            y = y.unsqueeze(pos)
            current.insert(pos, name)
    y = y.expand([known[n] for n in current])
    return y.reshape([math.prod(known[n] for n in g) for g in right])


def rearrange(x: torch.Tensor, pattern: str, **sizes: int) -> torch.Tensor:
    return _einops(x, pattern, sizes, allow_new=False)


def repeat(x: torch.Tensor, pattern: str, **sizes: int) -> torch.Tensor:
    return _einops(x, pattern, sizes, allow_new=True)


def einops_module() -> types.ModuleType:
    mod = types.ModuleType("einops")
    mod.rearrange = rearrange  # type: ignore[attr-defined]
    mod.repeat = repeat  # type: ignore[attr-defined]
    return mod


def upstream_module(name: str, path: str) -> types.ModuleType:
    """Execute one upstream file (whose imports are torch, einops and the standard library)."""
    return module(name, path, {"einops": einops_module()})
