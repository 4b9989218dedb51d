"""The hybrid models' registry entries: layouts, periodic MoE and the linear layers' state."""

from __future__ import annotations

from atlas.labkit.models.counting import (
    is_moe_layer,
    kv_bytes_per_token,
    layer_types,
    linear_attention_params,
    state_bytes,
)
from atlas.labkit.registry.models import model


def test_minimax_softmax_every_eighth_layer():
    kinds = layer_types(model("minimax-text-01"))
    assert [i for i, k in enumerate(kinds) if k == "full"] == list(range(7, 80, 8))


def test_jamba_attention_and_moe_layers():
    m = model("jamba-v0.1")
    kinds = layer_types(m)
    assert [i for i, k in enumerate(kinds) if k == "full"] == [4, 12, 20, 28]
    assert [i for i in range(32) if is_moe_layer(m, i)] == list(range(1, 32, 2))


def test_kimi_linear_full_layers_are_one_based_list():
    kinds = layer_types(model("kimi-linear-48b-a3b"))
    assert [i + 1 for i, k in enumerate(kinds) if k == "full"] == [4, 8, 12, 16, 20, 24, 27]


def test_kv_per_token_counts_softmax_layers_only():
    assert kv_bytes_per_token(model("minimax-text-01")) == 10 * 2 * 8 * 128 * 2
    assert kv_bytes_per_token(model("jamba-v0.1")) == 4 * 2 * 8 * 128 * 2
    assert kv_bytes_per_token(model("kimi-linear-48b-a3b")) == 7 * (512 + 64) * 2


def test_state_of_each_linear_kind():
    # lightning: 64 heads of 128 x 128, no convolution; 70 layers, fp32
    assert state_bytes(model("minimax-text-01")) == 70 * 64 * 128 * 128 * 4
    # Mamba: 8192 channels x 16 numbers, plus 3 conv inputs per channel; 28 layers
    assert state_bytes(model("jamba-v0.1")) == 28 * (8192 * 16 + 3 * 8192) * 4
    # KDA: 32 heads of 128 x 128, plus 3 conv inputs of q, k and v; 20 layers
    assert state_bytes(model("kimi-linear-48b-a3b")) == 20 * (32 * 128 * 128 + 3 * 3 * 4096) * 4


def test_lightning_layer_weights():
    h, d = 6144, 64 * 128
    assert linear_attention_params(model("minimax-text-01")) == 5 * h * d + d
