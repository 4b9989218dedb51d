"""Mutations of the normalization chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "rmsnorm-sums",
        "normalization",
        "normalization/norms.py",
        "    inv_rms = torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + eps)",
        "    inv_rms = torch.rsqrt(x32.pow(2).sum(dim=-1, keepdim=True) + eps)",
        ("normalization/placement",),
        "rms_norm sums the squares instead of averaging them",
    ),
    Mutation(
        "sinkhorn-rows-only",
        "normalization",
        "normalization/stacks.py",
        "        m = m / m.sum(dim=-2, keepdim=True)\n",
        "",
        ("normalization/beyond",),
        "Sinkhorn normalises rows only (the mixing matrix is not doubly stochastic)",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "hc-mix-transposed",
        "normalization",
        "normalization/stacks.py",
        'torch.einsum("nm,ntd->mtd", self.mix, h)',
        'torch.einsum("mn,ntd->mtd", self.mix, h)',
        ("normalization/beyond",),
        "Hyper-Connections mix the streams with the transposed matrix (invisible with n = 1)",
    ),
    Mutation(
        "rmsnorm-wrong-axis",
        "normalization",
        "normalization/norms.py",
        "inv_rms = torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + eps)",
        "inv_rms = torch.rsqrt(x32.pow(2).mean(dim=0, keepdim=True) + eps)",
        ("normalization/index",),
        "RMSNorm takes the mean over the tokens instead of the features (a swapped axis)",
    ),
    Mutation(
        "qk-bound-no-sqrt",
        "normalization",
        "normalization/norms.py",
        "    return d**0.5 * q_gain.abs().max().item() * k_gain.abs().max().item()",
        "    return d * q_gain.abs().max().item() * k_gain.abs().max().item()",
        ("normalization/problems", "normalization/placement"),
        "the QK-norm logit bound uses d instead of sqrt(d)",
    ),
    Mutation(
        "layernorm-bias-dropped",
        "normalization",
        "normalization/norms.py",
        "    return (centred * inv_std * weight.float() + bias.float()).to(x.dtype)",
        "    return (centred * inv_std * weight.float()).to(x.dtype)",
        ("normalization/placement", "normalization/index"),
        "LayerNorm forgets its bias",
    ),
]
