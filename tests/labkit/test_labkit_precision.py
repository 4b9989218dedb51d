"""atlas.labkit.precision: the low-precision chapter's taught code, checked without Sphinx.

Each test holds one claim of a page against something independent of the code: PyTorch's own
FP8 and E8M0 dtypes, PyTorch's vendored MX/NVFP4 reference quantizers, a closed form, or the
upstream function at the pin (DeepGEMM's casts, GPTQ, llm-awq), which skip where the upstream
objects are absent.
"""

from __future__ import annotations

import math

import pytest
import torch
from atlas.labkit.checks.precision.common import (
    deepgemm_math,
    mean_truncation_bias,
    outlier_activations,
    rel_error,
    torch_mx_utils,
)
from atlas.labkit.checks.precision.fp4 import unpack_fp4
from atlas.labkit.checks.precision.inference import (
    awq_pseudo_quantize,
    awq_upstream_scales,
    correlated_inputs,
    gptq_upstream,
    hessian,
    smoothquant_upstream,
)
from atlas.labkit.checks.precision.scaling import predicted_rounding_mse
from atlas.labkit.precision import budget, fp4, gemm, quant, scaling
from atlas.labkit.precision.formats import (
    BF16,
    E2M1,
    E2M3,
    E3M2,
    E4M3,
    E5M2,
    FP16,
    FP32,
    e8m0_value,
    round_to_format,
)


@pytest.mark.parametrize("fmt,dtype", [(E4M3, torch.float8_e4m3fn), (E5M2, torch.float8_e5m2)])
def test_fp8_values_are_torchs(fmt, dtype):
    table = fmt.finite_values()
    codes = torch.tensor(list(table), dtype=torch.uint8)
    values = torch.tensor(list(table.values()), dtype=torch.float64)
    cast = values.to(dtype)
    assert torch.equal(cast.view(torch.uint8), codes)
    assert torch.equal(cast.double(), values)
    fi = torch.finfo(dtype)
    assert (fmt.max, fmt.min_normal) == (fi.max, fi.smallest_normal)


@pytest.mark.parametrize("fmt", [FP32, BF16, FP16])
def test_closed_form_max_matches_finfo(fmt):
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[fmt.name]
    assert fmt.max == torch.finfo(dtype).max


def test_round_to_nearest_equals_torch_casts():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(100_000, generator=g) * 40
    assert torch.equal(
        round_to_format(x, E4M3), x.clamp(-448, 448).to(torch.float8_e4m3fn).double()
    )
    assert torch.equal(round_to_format(x * 100, E5M2), (x * 100).to(torch.float8_e5m2).double())
    assert torch.equal(round_to_format(x, BF16), x.bfloat16().double())


def test_e8m0_is_torchs():
    scales = torch.arange(255, dtype=torch.uint8).view(torch.float8_e8m0fnu).double()
    assert torch.equal(
        scales, torch.tensor([e8m0_value(c) for c in range(255)], dtype=torch.float64)
    )


def test_fp4_fp6_rounding_equals_torch_reference():
    mx = torch_mx_utils()
    x = torch.cat(
        [
            torch.randn(50_000, generator=torch.Generator().manual_seed(1)) * 3,
            torch.arange(-32, 33) * 0.25,
        ]
    )
    for fmt in (E2M1, E3M2, E2M3):
        codes = mx._f32_to_floatx_unpacked(x.float(), fmt.ebits, fmt.mbits)
        table = torch.tensor([fmt.decode(c) for c in range(1 << fmt.bits)], dtype=torch.float64)
        assert torch.equal(round_to_format(x, fmt), table[codes.long()])


def test_stochastic_rounding_is_unbiased():
    g = torch.Generator().manual_seed(0)
    x = torch.full((20_000,), 1.3, dtype=torch.float64)
    mean = round_to_format(x, E2M1, stochastic=True, generator=g).mean().item()
    assert abs(mean - 1.3) < 4 * 0.25 / math.sqrt(20_000)
    assert round_to_format(x[:1], E2M1).item() == 1.5  # nearest is biased


def test_deepgemm_casts_match():
    dg = deepgemm_math()
    x = torch.randn(130, 300, generator=torch.Generator().manual_seed(0)) * 3
    for theirs, block, pow2 in (
        (dg.per_token_cast_to_fp8(x, use_ue8m0=False), (1, 128), False),
        (dg.per_block_cast_to_fp8(x, use_ue8m0=False), (128, 128), False),
        (dg.per_token_cast_to_fp8(x, use_ue8m0=True), (1, 128), True),
    ):
        q, s = scaling.quantize_blocks(x, E4M3, block, pow2_scales=pow2)
        assert torch.equal(theirs[0].float(), q) and torch.equal(theirs[1], s)


def test_int8_error_matches_uniform_model():
    x = outlier_activations(256, 512, outliers=(7, 300))
    q, s = scaling.quantize_blocks(x, 8, (-1, 1))
    measured = (scaling.dequantize_blocks(q, s, (-1, 1)) - x).double().pow(2).mean().item()
    step = scaling.dequantize_blocks(torch.ones_like(q), s, (-1, 1))
    assert abs(measured / predicted_rounding_mse(x, step) - 1) < 0.05


def test_promotion_matches_truncation_model():
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(16, 2048, generator=g), torch.rand(128, 2048, generator=g)
    qa, sa = scaling.quantize_blocks(a, E4M3, (-1, -1))
    qb, sb = scaling.quantize_blocks(b, E4M3, (-1, -1))
    exact = (
        scaling.dequantize_blocks(qa, sa, (-1, -1)).double()
        @ scaling.dequantize_blocks(qb, sb, (-1, -1)).double().T
    )
    for every in (None, 128):
        out = gemm.fp8_gemm(
            qa, sa.expand(16, 16), qb, sb.expand(1, 16), acc_bits=14, promote_every=every
        )
        measured = -((out.double() - exact) / exact).mean().item()
        assert abs(measured / mean_truncation_bias((every or 2048) // 32, 14) - 1) < 0.1


def test_blockwise_gemm_is_exact_with_fp32_accumulator():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(100, 384, generator=g), torch.randn(200, 384, generator=g)
    qa, sa = scaling.quantize_blocks(a, E4M3, (1, 128))
    qb, sb = scaling.quantize_blocks(b, E4M3, (128, 128))
    exact = (
        scaling.dequantize_blocks(qa, sa, (1, 128)).double()
        @ scaling.dequantize_blocks(qb, sb, (128, 128)).double().T
    )
    assert rel_error(gemm.fp8_gemm(qa, sa, qb, sb, acc_bits=24), exact) < 1e-6


def test_fp4_quantizers_match_torch_reference():
    ref = torch_mx_utils()
    x = torch.randn(64, 512, generator=torch.Generator().manual_seed(0))
    q, s = fp4.mxfp4_quantize(x)
    packed, scales = ref.to_mxfp4(x)
    assert torch.equal(unpack_fp4(packed), q) and torch.equal(scales.float(), s)
    q, bs, ts = fp4.nvfp4_quantize(x)
    packed, scales, _ = ref.to_nvfp4(x, per_tensor_scale=ref.nvfp4_per_tensor_scale(x.abs().amax()))
    assert torch.equal(unpack_fp4(packed), q) and torch.equal(scales.float(), bs)


def test_hadamard_rotation_is_orthogonal_and_keeps_the_gemm():
    r = fp4.random_hadamard(32, seed=3)
    assert torch.allclose(r @ r.T, torch.eye(32, dtype=torch.float64), atol=1e-14)
    x, w = torch.randn(8, 128), torch.randn(16, 128)
    assert torch.allclose(
        fp4.rotate_blocks(x, r) @ fp4.rotate_blocks(w, r).T, x.double() @ w.double().T
    )


def test_gptq_matches_upstream_and_beats_rtn():
    x = correlated_inputs(1024, 256)
    w = torch.randn(128, 256, generator=torch.Generator().manual_seed(1))
    ours = quant.gptq(w, hessian(x), 4, 128)
    assert torch.allclose(ours, gptq_upstream(w, x, 4, 128), atol=1e-5)
    truth = x @ w.T
    assert rel_error(x @ ours.T, truth) < rel_error(x @ quant.rtn(w, 4, 128).T, truth)


def test_awq_matches_upstream():
    x = correlated_inputs(1024, 256)
    w = torch.randn(128, 256, generator=torch.Generator().manual_seed(1))
    assert torch.equal(quant.rtn(w, 4, 128), awq_pseudo_quantize(w, 4, 128))
    s, _ = quant.awq_search(w, x, 4, 128)
    assert torch.allclose(s, awq_upstream_scales(w, x, 4, 128))


def test_smoothquant_is_exact_and_matches_upstream():
    x = outlier_activations(128, 256, outliers=(3, 100)).double()
    w = torch.randn(64, 256, dtype=torch.float64) * 0.02
    s = quant.smoothquant(x.abs().amax(0), w)
    assert torch.allclose((x / s) @ (w * s).T, x @ w.T, rtol=1e-12, atol=1e-12)
    assert torch.allclose(
        s.float(), smoothquant_upstream(x.abs().amax(0).float(), w.float()), rtol=1e-5
    )


def test_storage_bits_match_real_tensors():
    mx = torch_mx_utils()
    x = torch.randn(128, 512)
    assert (
        8 * sum(t.nbytes for t in mx.to_mxfp4(x)) / x.numel()
        == budget.STORAGE["mxfp4"].bits_per_element
    )
    assert (
        8 * sum(t.nbytes for t in mx.to_nvfp4(x)[:2]) / x.numel()
        == budget.STORAGE["nvfp4"].bits_per_element
    )
