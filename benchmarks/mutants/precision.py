"""Mutations of the precision chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "round-half-up",
        "precision",
        "precision/formats.py",
        "        units = torch.round(units)\n",
        "        units = torch.floor(units + 0.5)\n",
        ("precision/formats",),
        "round to nearest breaks ties upward instead of to the even mantissa",
    ),
    Mutation(
        "amax-without-abs",
        "precision",
        "precision/scaling.py",
        "    amax = view.abs().amax(dim=(1, 3), keepdim=True).clamp(min=1e-4)",
        "    amax = view.amax(dim=(1, 3), keepdim=True).clamp(min=1e-4)",
        ("precision/scaling",),
        "the block amax is taken without abs (negative outliers overflow)",
    ),
    Mutation(
        "gptq-error-not-divided",
        "precision",
        "precision/quant.py",
        "            e = (col - q) / ub[i, i]\n",
        "            e = col - q\n",
        ("precision/inference",),
        "GPTQ feeds the raw rounding error forward, not divided by the Cholesky diagonal",
    ),
    Mutation(
        "nvfp4-tensor-scale-no-6",
        "precision",
        "precision/fp4.py",
        "    tensor_scale = x.abs().amax().float() / (E4M3.max * E2M1.max)",
        "    tensor_scale = x.abs().amax().float() / E4M3.max",
        ("precision/fp4",),
        "the NVFP4 tensor scale forgets the factor 6 of E2M1's largest value",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "scale-bits-per-group-dropped",
        "precision",
        "precision/budget.py",
        "        return self.element_bits + (self.scale_bits / self.group if self.scale_bits else 0.0)",
        "        return self.element_bits + (self.scale_bits if self.scale_bits else 0.0)",
        ("precision/index",),
        "the scale's bits are charged per element, not per group",
    ),
    Mutation(
        "int-qmax-off-by-one",
        "precision",
        "precision/scaling.py",
        "    return float(2 ** (fmt - 1) - 1) if isinstance(fmt, int) else fmt.max",
        "    return float(2 ** (fmt - 1)) if isinstance(fmt, int) else fmt.max",
        (),
        "an n-bit integer grid goes to 2^(n-1) (one past the symmetric range)",
    ),
    Mutation(
        "gemm-time-adds",
        "precision",
        "precision/budget.py",
        "    return max(flops / peak_flops, moved / bandwidth)",
        "    return flops / peak_flops + moved / bandwidth",
        ("precision/index",),
        "the roofline time adds compute and memory instead of taking the larger",
    ),
    Mutation(
        "pow2-scale-floor",
        "precision",
        "precision/scaling.py",
        "        s = torch.exp2(torch.ceil(torch.log2(s.double()))).float()",
        "        s = torch.exp2(torch.floor(torch.log2(s.double()))).float()",
        ("precision/scaling",),
        "power-of-two scales round down, so the largest value overflows the grid",
    ),
    # --- issue 39: the FP8 GEMM's emulated accumulator, caught by the exact reference ---
    Mutation(
        "accumulator-one-bit-more",
        "precision",
        "precision/gemm.py",
        "    drop = 24 - bits\n",
        "    drop = 23 - bits\n",
        ("precision/fp8-training",),
        "the limited accumulator keeps one significant bit more than acc_bits",
    ),
    Mutation(
        "promotion-next-scale-slice",
        "precision",
        "precision/gemm.py",
        "            kb = k0 // block  # the scale slice of this stretch of K\n",
        "            kb = min(k0 // block + 1, a_scale.shape[1] - 1)\n",
        ("precision/fp8-training",),
        "promotion multiplies by the scales of the next 128-wide slice of K",
    ),
]
