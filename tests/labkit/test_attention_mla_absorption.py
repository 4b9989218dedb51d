"""RoPE on MLA's content keys leaves no single absorbed query (attention/mla.md, third lab)."""

import torch
from atlas.labkit.attention import mla
from atlas.labkit.checks.attention.common import randn


def test_latent_query_fit_fails_only_under_position_dependent_rope():
    w = mla.MLAWeights.random(32, 2, 8, 8, 16, 16, seed=1)
    x, pos = randn(40, 32, seed=2), torch.arange(40)
    c, _ = mla.mla_cache(x, w, pos)
    plain, rotated = mla.latent_query_residual(w, x[-1], 39, c, pos)
    assert plain < 1e-12 and rotated > 0.05
    assert max(mla.latent_query_residual(w, x[-1], 39, c, torch.full((40,), 7))) < 1e-12


def test_latent_is_rms_normalised_before_caching():
    w = mla.MLAWeights.random(32, 2, 8, 8, 16, 16, seed=1)
    c, _ = mla.mla_cache(randn(5, 32, seed=3), w, torch.arange(5))
    rms = (c / w.g_kv).pow(2).mean(-1).sqrt()
    assert torch.allclose(rms, torch.ones(5, dtype=c.dtype), atol=1e-5)
