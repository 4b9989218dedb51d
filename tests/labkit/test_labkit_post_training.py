"""atlas.labkit.post_training: the post-training chapter's taught code, checked without Sphinx.

Each test asserts one claim a page makes against something independent of the code under test:
a hand derivation, a closed form, a dense or unpacked run, PyTorch's FLOP counter, or the
upstream's own function at the pin (slime, Megatron-LM, checkpoint-engine, nano-vllm; those tests
skip where the upstream objects are absent). Negative tests break one piece and check that the
comparison notices.
"""

from __future__ import annotations

import math

import pytest
import torch
from atlas.labkit import run_ranks
from atlas.labkit.checks.post_training.agentic import scripted_episode, slime_trajectory
from atlas.labkit.checks.post_training.common import lognormal_lengths, megatron_grpo, slime_loss
from atlas.labkit.checks.post_training.index import measured_rl_flops, toy_model_config
from atlas.labkit.checks.post_training.policy_gradient import (
    chain_expected_reward,
    lambda_return_advantages,
    slime_group_rewards,
    slime_ppo,
)
from atlas.labkit.checks.post_training.rollout_train import slime_loop, slime_placement
from atlas.labkit.checks.post_training.sft import (
    measured_token_weights,
    packed_matches_separate,
    slime_first_fit,
    slime_reduce,
)
from atlas.labkit.checks.post_training.weight_sync import (
    checkpoint_engine_buckets,
    engine_layers_match_dense,
    model_tensors,
    reshard_matches_dense,
)
from atlas.labkit.models.counting import flops_per_token, params_total
from atlas.labkit.post_training import agentic, costs, mismatch, pg, ppo, sft, system, weights
from atlas.labkit.registry.hardware import gpu
from atlas.labkit.registry.models import model

# ---------------------------------------------------------------------------------------------
# policy gradient
# ---------------------------------------------------------------------------------------------


def test_grpo_advantages_by_hand():
    r = torch.tensor([1.0, 0, 0, 1, 1, 1, 1, 0])
    a = pg.grpo_advantages(r, 4)
    s = math.sqrt(1 / 3)
    want = [0.5 / s, -0.5 / s, -0.5 / s, 0.5 / s, 0.5, 0.5, 0.5, -1.5]
    assert torch.allclose(a, torch.tensor(want, dtype=torch.float64), atol=1e-5)
    assert torch.allclose(
        pg.grpo_advantages(r, 4, std="none"),
        torch.tensor([0.5, -0.5, -0.5, 0.5, 0.25, 0.25, 0.25, -0.75], dtype=torch.float64),
    )
    assert torch.allclose(pg.grpo_advantages(torch.ones(4), 4), torch.zeros(4, dtype=torch.float64))


def test_grpo_advantages_match_slime_and_megatron():
    r = torch.tensor([1.0, 0, 0, 1, 0.3, 1, 1, 0])
    ours = pg.grpo_advantages(r, 4)
    assert torch.allclose(
        ours,
        torch.tensor(slime_group_rewards(r.tolist(), 4), dtype=torch.float64),
        atol=1e-6,
    )
    mg = megatron_grpo().advantages([r[:4].tolist(), r[4:].tolist()], [[1] * 4, [1] * 4])
    assert torch.allclose(
        pg.grpo_advantages(r, 4, std="population", eps=1e-4), torch.tensor(mg, dtype=torch.float64)
    )


def test_clipped_surrogate_by_hand_and_against_slime():
    A = torch.tensor([0.866, -0.866, -1.5, 0.5], dtype=torch.float64)
    ratio = torch.tensor([1.5, 0.5, 1.5, 0.9], dtype=torch.float64)
    old = torch.zeros(4, dtype=torch.float64)
    loss = pg.clipped_surrogate(ratio.log(), old, A)
    assert torch.allclose(
        loss, torch.tensor([-1.2 * 0.866, 0.8 * 0.866, 2.25, -0.45], dtype=torch.float64)
    )
    assert torch.allclose(loss, slime_ppo().compute_policy_loss(old - ratio.log(), A, 0.2, 0.2)[0])
    # clip-higher moves only the upper bound
    assert pg.clipped_surrogate(ratio.log(), old, A, 0.2, 0.28)[0] == pytest.approx(-1.28 * 0.866)


def test_gae_recursion_equals_definition_and_slime():
    g = torch.Generator().manual_seed(0)
    r, v = (
        torch.randn(2, 50, generator=g, dtype=torch.float64),
        torch.randn(2, 50, generator=g, dtype=torch.float64),
    )
    a, ret = pg.gae(r, v, 0.97, 0.9)
    assert torch.allclose(a, lambda_return_advantages(r, v, 0.97, 0.9))
    assert torch.allclose(ret, a + v)
    assert torch.allclose(a, slime_ppo().vanilla_gae(r, v, 0.97, 0.9)[0])
    # lambda = 1 is the Monte Carlo return minus the value (gamma = 1)
    a1, _ = pg.gae(r, v, 1.0, 1.0)
    assert torch.allclose(a1, r.flip(-1).cumsum(-1).flip(-1) - v)


def test_kl_estimators():
    x = torch.linspace(-2, 2, 9, dtype=torch.float64)
    zero = torch.zeros_like(x)
    assert torch.all(pg.kl_estimate(zero, x, "k3") >= 0)
    for k in ("k1", "k2", "k3"):
        assert torch.allclose(
            pg.kl_estimate(zero, x, k).float(),
            slime_ppo().compute_approx_kl(zero, x, k),
            atol=1e-6,
        )


def test_gspo_ratio_is_geometric_mean():
    logp = torch.tensor([-1.0, -2.0, -0.5, -0.1], dtype=torch.float64)
    old = torch.tensor([-1.5, -1.0, -0.5, -0.2], dtype=torch.float64)
    r = pg.gspo_ratio(logp, old, [3, 1])
    geo = torch.exp(logp[:3] - old[:3]).prod() ** (1 / 3)
    assert torch.allclose(r[:3], geo.expand(3)) and torch.allclose(
        r[3], torch.exp(torch.tensor(0.1, dtype=torch.float64))
    )


def test_ppo_improves_exact_expected_reward():
    logits, sampled = ppo.ppo_train(iterations=10, seed=1)
    assert chain_expected_reward(torch.zeros_like(logits), 2) == pytest.approx(1 / 3)
    assert chain_expected_reward(logits, 2) > 0.9


# ---------------------------------------------------------------------------------------------
# SFT
# ---------------------------------------------------------------------------------------------


def test_first_fit_and_pack():
    assert sft.first_fit([5, 4, 3, 2], 7) == [[0, 3], [1, 2]]
    tokens, pos, cu = sft.pack([[1, 2, 3], [4, 5]])
    assert (
        tokens.tolist() == [1, 2, 3, 4, 5]
        and pos.tolist() == [0, 1, 2, 0, 1]
        and cu.tolist() == [0, 3, 5]
    )
    m = sft.packed_causal_mask(cu)
    assert m[4, 3] and not m[3, 2] and not m[1, 2] and m[2, 0]


def test_first_fit_matches_slime():
    lengths = [
        int(x) for x in torch.randint(1, 3000, (300,), generator=torch.Generator().manual_seed(0))
    ]
    assert sft.first_fit(lengths, 4096) == slime_first_fit(lengths, 4096)


def test_packed_equals_separate_and_bugs_are_caught():
    r = packed_matches_separate()
    assert r["loss_equal"] and r["grads_equal"]
    assert not r["leaky_mask_equal"] and not r["no_restart_equal"]


def test_token_weights_measured_and_slime():
    L = [3, 30, 300]
    for mode in ("sequence", "token", "constant"):
        assert torch.allclose(measured_token_weights(L, mode, 300), sft.token_weights(L, mode, 300))
    x = torch.randn(sum(L), dtype=torch.float64)
    assert torch.allclose(sft.reduce_loss(x, L, "sequence"), slime_reduce(x, L, False))
    assert torch.allclose(sft.reduce_loss(x, L, "token"), slime_reduce(x, L, True))


# ---------------------------------------------------------------------------------------------
# index: costs
# ---------------------------------------------------------------------------------------------


def test_counted_flops_match_registry():
    toy, P, R = toy_model_config(), 4, 5
    counted = measured_rl_flops(P, R)
    gen = P * flops_per_token(toy, P, "prefill") + sum(
        flops_per_token(toy, c, "decode") for c in range(P + 1, P + R)
    )
    score = (P + R) * flops_per_token(toy, P + R, "prefill")
    assert counted == {"generate": gen, "score": score, "train": 3 * score}


def test_rl_step_shares():
    h100 = gpu("H100-SXM")
    s = costs.rl_step(model("qwen3-8b"), h100, 8, 32, 8, 1024, 2048, 0.4, h100.hbm_bandwidth / 2)
    assert s.train == pytest.approx(1.5 * s.logprobs)  # three forwards against two
    assert s.rollout > 0 and s.total == pytest.approx(s.rollout + s.logprobs + s.train + s.sync)
    # a decode step can never be faster than reading the weights once
    t = costs.rollout_seconds(model("qwen3-8b"), h100, 1, 1, 100, 1)
    assert t >= 100 * 2 * params_total(model("qwen3-8b")) / h100.hbm_bandwidth


# ---------------------------------------------------------------------------------------------
# rollout-train system
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_loops_match_slime(mode):
    R = [3.0, 8.0, 2.0, 2.0, 9.0, 1.0]
    ours = [
        (s.index, s.end, s.data_version, s.trainer_version)
        for s in system.simulate_loop(R, 4.0, 0.5, mode)
    ]
    assert ours == slime_loop(R, 4.0, 0.5, mode)


def test_async_step_formula_constant_durations():
    steps = system.simulate_loop([10.0] * 6, 7.0, 1.0, "async")
    assert [b.end - a.end for a, b in zip(steps[:4], steps[1:5], strict=True)] == [11.0] * 4
    assert [s.staleness for s in steps] == [0, 1, 1, 1, 1, 1]


def test_expected_max_length_against_simulation():
    g = torch.Generator().manual_seed(0)
    sims = [lognormal_lengths(32, 500, 0.7, 4096, g).max().item() for _ in range(3000)]
    assert sum(sims) / len(sims) == pytest.approx(
        system.expected_max_length(32, 500, 0.7, 4096), rel=0.02
    )


def test_placement_matches_slime():
    for case in [(8, 8, True), (8, 16, False), (4, 12, True)]:
        assert system.placement_gpus(*case) == slime_placement(*case)


# ---------------------------------------------------------------------------------------------
# weight updates
# ---------------------------------------------------------------------------------------------


def test_gather_glu_order():
    s0 = torch.tensor([[1.0], [2.0], [10.0], [20.0]])  # rank 0: gate rows 1, 2; up rows 10, 20
    s1 = torch.tensor([[3.0], [4.0], [30.0], [40.0]])
    assert weights.gather_tp([s0, s1], 0, glu=True).flatten().tolist() == [
        1,
        2,
        3,
        4,
        10,
        20,
        30,
        40,
    ]
    assert weights.gather_tp([s0, s1], 0).flatten().tolist() == [1, 2, 10, 20, 3, 4, 30, 40]


def test_reshard_on_ranks_matches_dense_and_slime():
    s = weights.Shape(hidden=8, heads=4, groups=2, head_dim=2)
    for r in run_ranks(reshard_matches_dense, 2, s, 12):
        assert r["ours_equal"] and r["slime_equal"]


def test_engine_loaders_on_ranks():
    s = weights.Shape(hidden=8, heads=4, groups=2, head_dim=2)
    for r in run_ranks(engine_layers_match_dense, 2, s, 12):
        assert all(r.values())


def test_buckets_match_checkpoint_engine():
    tensors = model_tensors(model("qwen3-0.6b"))
    assert sum(b for _, b in tensors) == 2 * params_total(model("qwen3-0.6b"))
    per, bucket = (
        (len(tensors) + 3) // 4,
        2**29,
    )  # at least the largest tensor, as checkpoint-engine requires
    ours = [
        (r, [tensors[r * per + i][0] for i in b])
        for r in range(4)
        for b in weights.plan_buckets([n for _, n in tensors[r * per : (r + 1) * per]], bucket)
    ]
    assert [(o, n) for o, n, _ in checkpoint_engine_buckets(tensors, 4, bucket)] == ours


# ---------------------------------------------------------------------------------------------
# mismatch
# ---------------------------------------------------------------------------------------------


def test_batch_invariance():
    g = torch.Generator().manual_seed(0)
    h = torch.randn(16, 256, generator=g).to(torch.bfloat16)
    W = (torch.randn(256, 64, generator=g) / 16).to(torch.bfloat16)
    assert torch.equal(
        mismatch.batch_invariant_matmul(h[:2], W), mismatch.batch_invariant_matmul(h, W)[:2]
    )
    assert not torch.equal(mismatch.splitk_matmul(h[:2], W), mismatch.splitk_matmul(h, W)[:2])


def test_tis_bias_closed_form():
    g = torch.Generator().manual_seed(3)
    lg = torch.randn(20, generator=g, dtype=torch.float64)
    sl = lg + 0.4 * torch.randn(20, generator=g, dtype=torch.float64)
    r = torch.rand(20, generator=g, dtype=torch.float64)
    p, q = torch.softmax(lg, -1), torch.softmax(sl, -1)
    exact = mismatch.policy_gradient(lg, lg, r, None)
    for C in (0.5, 1.0, 1.3):
        # bias = -sum over tokens with p > C q of (p - C q) r (e_y - p)
        excess = torch.clamp(p - C * q, min=0) * r
        want = -(excess[:, None] * (torch.eye(20, dtype=torch.float64) - p)).sum(0)
        assert torch.allclose(mismatch.policy_gradient(lg, sl, r, C) - exact, want)
    assert torch.allclose(mismatch.policy_gradient(lg, sl, r, float((p / q).max()) + 1e-9), exact)


def test_tis_weights_match_slime():
    import types

    a, b = torch.randn(12), torch.randn(12)
    args = types.SimpleNamespace(tis_clip=2.0, tis_clip_low=0.1)
    out, _, _ = slime_loss().vanilla_tis_function(
        args, pg_loss=torch.ones(12), train_log_probs=[a], rollout_log_probs=[b], loss_masks=None
    )
    assert torch.allclose(out, mismatch.tis_weights(a, b, 2.0, 0.1))


# ---------------------------------------------------------------------------------------------
# agentic
# ---------------------------------------------------------------------------------------------


def test_trajectory_matches_slime_and_refuses_drift():
    ep = scripted_episode(seed=2, turns=4)
    t = agentic.Trajectory()
    for turn in ep:
        t.add_turn(*turn)
    assert t.response() == slime_trajectory(ep)
    bad = list(ep[1][0])
    bad[len(ep[0][0])] += 1  # the first output token, re-encoded differently
    u = agentic.Trajectory()
    u.add_turn(*ep[0])
    with pytest.raises(ValueError):
        u.add_turn(bad, ep[1][1], ep[1][2])


def test_order_statistic_against_simulation():
    g = torch.Generator().manual_seed(0)
    cdf = lambda x: system.lognormal_cdf(x, 50.0, 0.8) if x < 1000 else 1.0  # noqa: E731
    sims = [
        agentic.first_k_finish_time(lognormal_lengths(16, 50.0, 0.8, 1000, g).tolist(), 12)
        for _ in range(3000)
    ]
    assert sum(sims) / len(sims) == pytest.approx(
        agentic.expected_first_k_finish(cdf, 16, 12, 1000), rel=0.03
    )
