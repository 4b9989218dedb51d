"""atlas.labkit.post_training.pg: KL estimators as losses, RLOO, batch whitening, DAPO's overlong
penalty, each checked against something independent of the code under test (autograd on the
exact divergences, a leave-one-out loop, hand-worked values, slime's code at the pin). Tests that
run slime's code skip where the upstream objects are absent."""

from __future__ import annotations

import pytest
import torch
from atlas.labkit.checks.post_training.policy_gradient import (
    estimator_gradient,
    exact_kl_gradients,
    leave_one_out,
    slime_group_rewards,
    slime_ppo,
    slime_whiten,
)
from atlas.labkit.pinned import UpstreamUnavailable
from atlas.labkit.post_training.pg import (
    grpo_advantages,
    kl_estimate,
    masked_whiten,
    overlong_penalty,
    rloo_advantages,
)


def _toy() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    pi = torch.softmax(torch.randn(20, generator=g, dtype=torch.float64), -1)
    ref = torch.softmax(pi.log() + 0.5 * torch.randn(20, generator=g, dtype=torch.float64), -1)
    return pi.log(), ref.log()


@pytest.mark.parametrize(("kind", "target"), [("k1", None), ("k2", "reverse"), ("k3", "forward")])
def test_kl_estimator_expected_gradient(kind: str, target: str | None) -> None:
    theta, ref = _toy()
    exact = exact_kl_gradients(theta, ref)
    got = estimator_gradient(theta, ref, None, kl_estimate, kind)
    want = torch.zeros(20, dtype=torch.float64) if target is None else exact[target]
    assert torch.allclose(got, want, atol=1e-10)


def test_kl_gradients_differ_so_the_check_can_fail() -> None:
    theta, ref = _toy()
    exact = exact_kl_gradients(theta, ref)
    assert (exact["reverse"] - exact["forward"]).norm() > 0.15 * exact["reverse"].norm()


def test_slime_kl_estimators_match_ours_as_losses() -> None:
    theta, ref = _toy()
    try:
        slime = slime_ppo().compute_approx_kl
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    y = torch.arange(20).repeat(3)
    for kind in ("k1", "k2", "k3"):
        ours = estimator_gradient(theta, ref, y, kl_estimate, kind)
        theirs = estimator_gradient(theta, ref, y, slime, kind)
        assert torch.allclose(ours, theirs, atol=1e-6)


def test_rloo_against_leave_one_out_loop() -> None:
    r = torch.tensor([1.0, 0, 0, 1, 0.5, 0.25, 1, 0])
    assert torch.allclose(
        rloo_advantages(r, 4), torch.tensor(leave_one_out(r.tolist(), 4), dtype=torch.float64)
    )
    assert torch.allclose(rloo_advantages(r, 4), 4 / 3 * grpo_advantages(r, 4, std="none"))


def test_masked_whiten_by_hand_and_against_slime() -> None:
    v = torch.tensor([1.0, 2.0, 3.0, 100.0], dtype=torch.float64)
    m = torch.tensor([1.0, 1.0, 1.0, 0.0], dtype=torch.float64)
    w = masked_whiten(v, m)
    assert torch.allclose(w[:3], torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64), atol=1e-6)
    try:
        theirs = slime_whiten(v.float(), m.float()).double()
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    assert torch.allclose(w, theirs, atol=1e-4)


def test_slime_baseline_rewards_are_centred_only() -> None:
    r = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    try:
        got = slime_group_rewards(r, 4, estimator="reinforce_plus_plus_baseline")
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    assert got == pytest.approx([0.5, -0.5, -0.5, 0.5, 0.25, 0.25, 0.25, -0.75])


def test_slime_normalises_across_the_batch_when_counts_differ() -> None:
    r = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    try:
        got = slime_group_rewards(r, 4, std=False, prompts=3)
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    mean = sum(r) / len(r)
    assert got == pytest.approx([x - mean for x in r])


def test_overlong_penalty_hand_values() -> None:
    assert overlong_penalty(16_384, 20_480, 4_096) == 0.0
    assert overlong_penalty(18_432, 20_480, 4_096) == -0.5
    assert overlong_penalty(20_480, 20_480, 4_096) == -1.0
    assert overlong_penalty(30_000, 20_480, 4_096) == -1.0
