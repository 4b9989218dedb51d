"""Fast unit tests of the normalization chapter's labkit (no Sphinx)."""

import torch
import torch.nn.functional as F
from atlas.labkit.checks.normalization.beyond import hyper_connection_n1
from atlas.labkit.checks.normalization.cost import sequence_parallel_add_norm
from atlas.labkit.checks.normalization.index import residual_gradient_flow
from atlas.labkit.normalization.norms import (
    add_rms_norm,
    layer_norm,
    qk_logit_bound,
    qk_norm_logits,
    rms_norm,
)
from atlas.labkit.normalization.stacks import sinkhorn


def test_rms_norm_matches_torch():
    x, g = torch.randn(4, 32), torch.rand(32) + 0.5
    assert torch.allclose(rms_norm(x, g), F.rms_norm(x, (32,), g, 1e-6), atol=1e-5)


def test_layer_norm_matches_torch():
    x, g, b = torch.randn(4, 32), torch.rand(32), torch.randn(32)
    assert torch.allclose(layer_norm(x, g, b), F.layer_norm(x, (32,), g, b, 1e-5), atol=1e-5)


def test_add_rms_norm_returns_sum_as_residual():
    x, r, g = torch.randn(4, 32), torch.randn(4, 32), torch.ones(32)
    normed, stream = add_rms_norm(x, r, g)
    assert torch.allclose(stream, x + r) and torch.allclose(normed, rms_norm(x + r, g))


def test_qk_bound():
    q, k, g = 10 * torch.randn(2, 8, 16), 10 * torch.randn(2, 8, 16), torch.rand(16) + 0.5
    assert qk_norm_logits(q, k, g, g).abs().max() <= qk_logit_bound(16, g, g)


def test_sinkhorn_doubly_stochastic():
    m = sinkhorn(torch.randn(4, 4), iters=50)
    assert torch.allclose(m.sum(0), torch.ones(4), atol=1e-4)
    assert torch.allclose(m.sum(1), torch.ones(4), atol=1e-4)


def test_hc_and_sp_and_flow():
    assert hyper_connection_n1()
    assert sequence_parallel_add_norm()["match"]
    flow = residual_gradient_flow(depth=16)
    assert all(torch.allclose(a, b, rtol=1e-6) for a, b in flow.values())
