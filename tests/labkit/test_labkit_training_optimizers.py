"""The update rules of ``training/optimizers.md`` against ``torch.optim``."""

import pytest
from atlas.labkit.checks.training.optimizers import (
    against_torch,
    newton_schulz_singular_values,
    torch_state_bytes_per_param,
)
from atlas.labkit.training.optimizers import state_bytes_per_param


@pytest.mark.parametrize("name", ["sgd", "momentum", "adam", "adamw", "muon"])
def test_rule_matches_torch(name):
    assert against_torch(name, steps=5, shape=(12, 20), seed=3) < 1e-12


@pytest.mark.parametrize("name", ["sgd", "momentum", "adam", "adamw", "muon"])
def test_state_bytes_match_torch(name):
    assert torch_state_bytes_per_param(name) == state_bytes_per_param(name)


def test_newton_schulz_is_torch_and_near_orthogonal():
    r = newton_schulz_singular_values(seed=1, shape=(48, 96))
    assert r["ours_equal"] and 0.5 < r["min"] < r["max"] < 1.5
