"""The registries: every figure has a source, and derived totals agree with published ones."""

from __future__ import annotations

import pytest

from atlas.labkit.registry import hardware, models
from atlas.labkit.registry.models import (
    FIELDS,
    MODELS,
    kv_bytes,
    kv_bytes_per_token,
    model,
    params_active,
    params_total,
    source_of,
)


@pytest.mark.parametrize("name", list(MODELS))
def test_every_field_has_a_source(name):
    m = model(name)
    for f in FIELDS:
        if getattr(m, f) is None:
            continue
        s = source_of(m, f)
        assert s.ref.startswith(("cite:", "https://github.com/")), s.ref


def test_at_least_fourteen_models():
    assert len(MODELS) >= 14


def test_unknown_model_names_the_known_ones():
    with pytest.raises(KeyError, match="llama-3.1-8b"):
        model("llama-9")


def test_llama_31_8b_exact_count():
    # 32 * (4096*4096*2 + 2*4096*1024 + 3*4096*14336 + 2*4096) + 2*128256*4096 + 4096
    assert params_total(model("llama-3.1-8b")) == 8_030_261_248


def test_kv_bytes_llama_70b_128k_is_40_gib():
    m = model("llama-3.1-70b")
    assert kv_bytes_per_token(m, "bf16") == 2 * 80 * 8 * 128 * 2
    assert kv_bytes(m, 131072, "bf16") == 40 * 2**30


def test_mla_caches_latent_and_rope_key():
    m = model("deepseek-v3")
    assert kv_bytes_per_token(m, "bf16") == 61 * (512 + 64) * 2
    assert kv_bytes_per_token(m, "fp8") * 2 == kv_bytes_per_token(m, "bf16")


def test_sliding_layers_stop_at_the_window():
    m = model("gpt-oss-120b")
    per_layer = 2 * 8 * 64 * 2
    assert kv_bytes(m, 100_000) == 18 * per_layer * 100_000 + 18 * per_layer * 128


def test_hybrid_counts_only_full_layers():
    m = model("qwen3-next-80b-a3b")
    assert kv_bytes_per_token(m, "bf16") == 12 * 2 * 2 * 256 * 2


def test_gpus_present():
    for name in ("A100-80GB-SXM", "H100-SXM", "H200-SXM", "B200", "GB200"):
        g = hardware.gpu(name)
        assert g.peak("bf16") > 0 and g.hbm_bandwidth > 0
