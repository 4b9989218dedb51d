"""The registries: every figure has a source, and derived totals agree with published ones."""

from __future__ import annotations

import pytest
from atlas.labkit.models.counting import kv_bytes, kv_bytes_per_token, params_active, params_total
from atlas.labkit.registry import hardware, schema
from atlas.labkit.registry.models import MODELS, model
from atlas.labkit.registry.schema import FIELDS, source_of


@pytest.mark.parametrize("name", list(MODELS))
def test_every_field_has_a_source(name):
    m = model(name)
    for f in FIELDS:
        if getattr(m, f) is None:
            continue
        s = source_of(m, f)
        assert s.ref.startswith(("cite:", "https://github.com/", "https://huggingface.co/")), s.ref


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


@pytest.mark.parametrize("name", [n for n, m in MODELS.items() if m.reported])
def test_derived_counts_agree_with_reports(name):
    from atlas.labkit.checks.models.common import agreement

    a = agreement(model(name))
    assert a.total_ok, (a.total, a.total_reported)
    assert a.active_ok, (a.active, a.active_reported)


def test_published_figures_spot_checks():
    # DeepSeek-V3 671B / 37B, Llama 3.1 405B, gpt-oss-120b 116.83B / 5.13B (lookup left out)
    assert abs(params_total(model("deepseek-v3")) / 671e9 - 1) < 0.001
    assert abs(params_active(model("deepseek-v3")) / 37e9 - 1) < 0.03
    assert abs(params_total(model("llama-3.1-405b")) / 405e9 - 1) < 0.005
    g = model("gpt-oss-120b")
    assert round(params_total(g) / 1e9, 2) == 116.83
    assert round((params_active(g) - g.vocab * g.hidden) / 1e9, 2) == 5.13


@pytest.mark.parametrize("name", ["llama-3.1-8b", "deepseek-v3", "gpt-oss-120b", "gemma-3-27b"])
def test_meta_modules_have_the_counted_parameters(name):
    from atlas.labkit.checks.models.counting import count_by_building
    from atlas.labkit.models.counting import vision_params

    m = model(name)
    assert count_by_building(m) == params_total(m) - vision_params(m.vision, m.hidden)


@pytest.mark.parametrize("name", ["llama-2-7b", "deepseek-v3", "gpt-oss-120b", "qwen3-235b-a22b"])
def test_flop_counter_matches_decode_formula_and_cache_bytes(name):
    from atlas.labkit.checks.models.counting import run_tokens, scaled_down
    from atlas.labkit.models.counting import flops_per_token

    m = scaled_down(name, layers=3)
    run = run_tokens(m, 9)
    assert run.flops == [flops_per_token(m, t + 1, "decode") for t in range(9)]
    assert run.cache_bytes == kv_bytes(m, 9, "bf16")


def test_hardware_sources_cover_the_headline_figures():
    for g in hardware.GPUS.values():
        for key in ("flops", "hbm", "nvlink", "tdp"):
            assert key in g.sources, (g.name, key)
        assert g.peak("bf16") == g.peak("fp16")
        assert g.peak("fp8") == 2 * g.peak("bf16") if "fp8" in g.flops else True


def test_parse_count_rounding():
    assert schema.parse_count("116.83B") == (116.83e9, 0.005e9)
    assert schema.parse_count("1.04T")[0] == 1.04e12


def test_count_by_building_equals_the_full_build():
    from atlas.labkit.checks.models.common import build
    from atlas.labkit.checks.models.counting import count_by_building, count_tensors

    for name in ("llama-3.1-8b", "gpt-oss-20b", "gemma-3-27b", "mixtral-8x7b"):
        m = model(name)
        assert count_by_building(m) == count_tensors(build(m))


def test_registry_matches_slime_scripts_at_the_pin():
    from atlas.labkit.checks.models.index import SLIME_SCRIPTS, registry_vs_slime
    from atlas.labkit.pinned import UpstreamUnavailable

    try:
        diffs = {name: registry_vs_slime(name) for name in SLIME_SCRIPTS}
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    assert diffs == {name: {} for name in SLIME_SCRIPTS}


@pytest.mark.parametrize("name", ["llama-3.1-8b", "gpt-oss-120b", "gemma-3-27b"])
def test_causal_prefill_is_the_mean_of_the_decode_steps(name):
    from atlas.labkit.checks.models.counting import run_tokens, scaled_down
    from atlas.labkit.models.counting import flops_per_token

    m = scaled_down(name, layers=3)
    run = run_tokens(m, 10)
    assert sum(run.flops) / 10 == flops_per_token(m, 10, "prefill")
