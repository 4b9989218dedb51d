"""What the edge chapter's labs do not assert: refusals, all-zero blocks, lookups."""

from __future__ import annotations

import numpy as np
import pytest
from atlas.labkit.edge import quants
from atlas.labkit.edge.blocks import FORMATS
from atlas.labkit.edge.gguf import align_offset, read_gguf
from atlas.labkit.registry.edge import SOCS, lpddr_bandwidth, soc


def test_tensor_bytes_refuses_partial_blocks() -> None:
    with pytest.raises(ValueError, match="multiple of 256"):
        FORMATS["Q4_K"].tensor_bytes(300)


@pytest.mark.parametrize("name", ["q8_0", "q4_0", "q4_k"])
def test_zero_blocks_round_trip_to_zero(name: str) -> None:
    x = np.zeros(256, dtype=np.float32)
    q = getattr(quants, f"quantize_{name}")(x)
    assert np.array_equal(getattr(quants, f"dequantize_{name}")(q), x)


def test_quantizers_refuse_ragged_lengths() -> None:
    with pytest.raises(ValueError, match="block size 32"):
        quants.quantize_q4_0(np.ones(33, dtype=np.float32))


def test_q4_0_keeps_the_largest_weight_exactly() -> None:
    x = np.linspace(-0.3, 0.7, 32, dtype=np.float32)
    y = quants.dequantize_q4_0(quants.quantize_q4_0(x))
    assert y[-1] == np.float16(0.7 / -8) * -8  # the code -8 times the FP16 scale


def test_reader_refuses_other_files() -> None:
    with pytest.raises(ValueError, match="not a GGUF file"):
        read_gguf(b"GGML" + bytes(20))


def test_align_offset() -> None:
    assert [align_offset(o, 32) for o in (0, 1, 31, 32, 33)] == [0, 32, 32, 32, 64]


def test_soc_lookup_and_derived_bandwidth() -> None:
    assert soc("Snapdragon 8 Elite").bandwidth == lpddr_bandwidth(10_600, 64) == 84.8e9
    with pytest.raises(KeyError, match="known: "):
        soc("Snapdragon 9")
    assert all(s.sources for s in SOCS.values())
