"""The low-precision chapter's lab code: number formats, scaling, FP8 GEMMs, FP4, quantization.

Taught modules (each shown on its page with ``labcode``):

- :mod:`.formats`: minifloat formats defined by their bit fields, every value enumerated from
  the bit patterns, round-to-nearest-even and stochastic rounding onto any of them;
- :mod:`.scaling`: scaled quantization at every granularity (tensor, channel, token, tile,
  block), integer grids, delayed and current scaling;
- :mod:`.gemm`: an FP8 GEMM with 1x128 and 128x128 scales whose accumulator keeps a limited
  number of mantissa bits, with and without promotion to FP32;
- :mod:`.fp4`: MXFP4 and NVFP4 block quantization, random Hadamard transforms;
- :mod:`.quant`: weight-only round-to-nearest, GPTQ, AWQ's scale search, SmoothQuant.

:mod:`atlas.labkit.checks.precision` holds what checks them: upstream functions run from the
pinned sources (DeepGEMM's casts, GPTQ, AWQ, SmoothQuant as llm-awq ships it, torch's vendored
MX quantizers), test tensors with outliers, error metrics.
"""

ROLE = "taught"
