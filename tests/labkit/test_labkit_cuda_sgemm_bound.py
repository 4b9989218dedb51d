"""The SGEMM page's roofline bound (cuda_sgemm.predicted_tflops) and the fp32 figures it reads."""

from __future__ import annotations

import pytest
from atlas.labkit.checks.kernels.cuda_sgemm import INTENSITY, predicted_tflops
from atlas.labkit.registry.hardware import TENSOR_CORE_CLOCKS, gpu
from atlas.labkit.registry.sm import FP32_CORES


def test_a100_fp32_clock_matches_the_tensor_core_boost_clock() -> None:
    """19.5 TFLOP/s over 108 SMs of 64 cores implies 1.41 GHz, the clock the whitepaper gives."""
    cores, part = FP32_CORES["A100-80GB-SXM"], gpu("A100-80GB-SXM")
    clock = cores.peak_flops / (2 * cores.cores_per_sm * part.sms)
    assert clock == pytest.approx(TENSOR_CORE_CLOCKS["A100-80GB-SXM"].boost_clock_hz, rel=1e-3)


def test_bound_is_the_smallest_roof() -> None:
    """On H100 the blocked kernels are bound by HBM at intensity 16, the naive one at 1/4."""
    bound = predicted_tflops("H100-SXM")
    assert set(bound) == set(INTENSITY)
    assert bound["sgemm_naive"] == pytest.approx(0.25 * 3.35)
    assert bound["sgemm_warptile"] == pytest.approx(16 * 3.35)
    assert max(bound.values()) <= 67


def test_unknown_part_fails_loudly() -> None:
    with pytest.raises(KeyError):
        predicted_tflops("B200")
