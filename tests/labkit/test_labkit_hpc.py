"""atlas.labkit.hpc: the HPC chapter's taught code, checked without Sphinx.

Multi-rank checks share one ``run_ranks`` start (a module fixture). Each other test pairs the
taught code with something independent of it: the library collective, NCCL's own tree builder
compiled from the pin, PyTorch's FLOP counter, a simulation, or a closed form.
"""

from __future__ import annotations

import math
import random
import unittest
from collections import Counter
from typing import Any

import pytest
import torch
from atlas.labkit import run_ranks
from atlas.labkit.checks.hpc.collectives import nccl_dtree, ring_vs_library
from atlas.labkit.checks.hpc.common import in_order
from atlas.labkit.checks.hpc.roofline import count_bytes, count_flops, tiny_decoder_step_flops
from atlas.labkit.checks.hpc.scale_out import all_to_all_vs_routing, two_level_vs_library
from atlas.labkit.checks.hpc.scale_up import tp_mlp_vs_dense
from atlas.labkit.hpc import alphabeta, fabric, failures, roofline, trees, verbs
from atlas.labkit.registry.hardware import LINKS, TENSOR_CORE_CLOCKS, gpu


@pytest.fixture(scope="module")
def four_ranks() -> list[list[Any]]:
    calls = [
        (ring_vs_library, 4096),
        (two_level_vs_library, 2, 4096),
        (all_to_all_vs_routing, 256, 16, 16, 4),
        (tp_mlp_vs_dense, 64, 32, 128),
    ]
    return run_ranks(in_order, 4, calls, timeout=120)


def test_ring_and_halving_doubling_match_all_reduce(four_ranks: list[list[Any]]) -> None:
    S, n = 4096 * 8, 4
    for rank in four_ranks:
        r = rank[0]
        assert r["ring_ok"] and r["rs_ok"] and r["rs_ag_ok"] and r["hd_ok"]
        assert r["ring_bytes"] == 2 * (n - 1) / n * S == r["hd_bytes"]
        assert r["rs_bytes"] == r["ag_bytes"] == (n - 1) / n * S
        assert (r["ring_messages"], r["hd_messages"]) == (6, 4)


def test_two_level_puts_one_gth_on_the_network(four_ranks: list[list[Any]]) -> None:
    for rank in four_ranks:
        r = rank[1]
        assert r["ok"]
        assert r["inter_bytes"] == fabric.two_level_nic_bytes(r["buffer_bytes"], 2, 2)
    assert max(rank[1]["flat_inter_bytes"] for rank in four_ranks) == fabric.flat_ring_nic_bytes(
        four_ranks[0][1]["buffer_bytes"], 4
    )


def test_all_to_all_follows_routing(four_ranks: list[list[Any]]) -> None:
    R = torch.tensor([rank[2]["routing_row"] for rank in four_ranks])
    for j, rank in enumerate(four_ranks):
        r = rank[2]
        assert r["recv_counts"] == R[:, j].tolist() and r["recv_senders_ok"]
        assert r["sent_bytes"] == (R[j].sum() - R[j, j]).item() * r["token_bytes"]


def test_tp_mlp_matches_dense_and_counts_bytes(four_ranks: list[list[Any]]) -> None:
    from atlas.labkit.hpc.scaleup import tp_bytes_per_layer

    for rank in four_ranks:
        assert rank[3]["ok"]
        assert rank[3]["bytes"] == tp_bytes_per_layer(64, 32, 4, elem_bytes=8) / 2


def test_trees_match_nccl_at_the_pin() -> None:
    try:
        theirs = nccl_dtree()
    except unittest.SkipTest as exc:
        pytest.skip(str(exc))
    for n in range(1, 130):
        for r in range(n):
            ours = tuple(x for t in trees.dtree(n, r) for x in (t.up, t.down0, t.down1))
            assert ours == theirs(n, r), (n, r)


def test_double_tree_leaves_are_interior_in_the_other_tree() -> None:
    for n in (8, 16, 64):
        for r in range(1, n - 1):
            first, second = trees.dtree(n, r)
            leaf = lambda t: t.down0 == -1 and t.down1 == -1  # noqa: E731
            assert not (leaf(first) and leaf(second)), (n, r)


def test_simulated_schedules_match_closed_forms() -> None:
    a, b = 10e-6, 25e9
    for n in (8, 16):
        for S in (1e4, 1e7):
            assert math.isclose(
                alphabeta.simulate(alphabeta.ring_schedule(S, n), a, b),
                alphabeta.ring_time(S, n, a, b),
                rel_tol=1e-9,
            )
            assert math.isclose(
                alphabeta.simulate(alphabeta.binomial_tree_schedule(S, n), a, b),
                alphabeta.binomial_tree_time(S, n, a, b),
                rel_tol=1e-9,
            )
            assert math.isclose(
                alphabeta.simulate(alphabeta.recursive_doubling_schedule(S, n), a, b),
                alphabeta.recursive_doubling_time(S, n, a, b),
                rel_tol=1e-9,
            )


def test_crossover_is_where_simulated_times_meet() -> None:
    a, b, n = 14e-6, 50e9, 16
    S = alphabeta.crossover(n, a, b)
    ring = alphabeta.simulate(alphabeta.ring_schedule(S, n), a, b)
    tree = alphabeta.simulate(alphabeta.binomial_tree_schedule(S, n), a, b)
    assert math.isclose(ring, tree, rel_tol=1e-9)
    S = alphabeta.crossover(n, a, b, "doubling")
    assert math.isclose(
        alphabeta.simulate(alphabeta.ring_schedule(S, n), a, b),
        alphabeta.simulate(alphabeta.recursive_doubling_schedule(S, n), a, b),
        rel_tol=1e-9,
    )


def test_double_tree_port_load() -> None:
    sent = Counter()
    for m in alphabeta.tree_schedule(1e9, 16, chunk=2**20):
        sent[m.src] += m.nbytes
    assert max(sent.values()) == alphabeta.double_tree_port_bytes(1e9)


def test_roofline_counts_match_pytorch() -> None:
    a = torch.randn(16, 256, dtype=torch.bfloat16)
    w = torch.randn(256, 512, dtype=torch.bfloat16)
    c = roofline.gemm(16, 512, 256)
    assert count_flops(lambda: a @ w) == c.flops
    assert count_bytes(lambda: a @ w) == c.bytes


def test_gemm_crossover_matches_bisection() -> None:
    ridge = 295.0
    n, k = 28672, 8192
    exact = roofline.gemm_crossover_tokens(n, k, ridge)
    m = math.ceil(exact)
    assert roofline.gemm(m, n, k).intensity >= ridge > roofline.gemm(m - 1, n, k).intensity


def test_training_flops_formula_matches_counted() -> None:
    counted, params = tiny_decoder_step_flops(2, 128, 500, 64, 2)
    assert counted == roofline.training_flops_per_token(params, 2, 64, 128) * 64 * 2


def test_registry_peaks_follow_from_the_architecture() -> None:
    for name, c in TENSOR_CORE_CLOCKS.items():
        g = gpu(name)
        derived = g.sms * c.fma_per_clock_per_sm * 2 * c.boost_clock_hz
        assert abs(derived / g.peak("bf16") - 1) < 0.002
    assert LINKS["nvlink4"].per_direction == gpu("H100-SXM").nvlink_bandwidth / 2


def test_young_daly_against_simulation() -> None:
    M, delta, restart = 3.0 * 3600, 300.0, 600.0
    work = 1000 * M
    tau = failures.daly_interval(delta, M)
    trace = failures.failure_trace(M, 4 * work, seed=1)
    at = lambda t: failures.simulate_run(work, t, delta, restart, trace)  # noqa: E731
    assert at(tau) < at(tau / 3) and at(tau) < at(3 * tau)
    assert failures.daly_interval(1.0, 1e6) == pytest.approx(
        failures.young_interval(1.0, 1e6), rel=0.01
    )


def test_simulate_run_without_failures_is_work_plus_checkpoints() -> None:
    assert failures.simulate_run(100.0, 10.0, 1.0, 5.0, []) == 100.0 + 9 * 1.0


def test_stragglers() -> None:
    formula = failures.straggler_step_time(1.0, 1.5, 1 / 2000, 256)
    measured = failures.simulate_steps(1.0, 1.5, 1 / 2000, 256, steps=4000, seed=0)
    assert abs(measured / formula - 1) < 0.01


def test_verbs_one_sided_two_sided() -> None:
    a, b = verbs.Nic(), verbs.Nic()
    src = torch.arange(64).to(torch.uint8)
    dst = torch.zeros(64, dtype=torch.uint8)
    mr_src = a.reg_mr(src, verbs.LOCAL_WRITE)
    mr_dst = b.reg_mr(dst, verbs.REMOTE_WRITE)
    qa, qb = (
        verbs.QueuePair(a, verbs.CompletionQueue()),
        verbs.QueuePair(b, verbs.CompletionQueue()),
    )
    qa.connect(qb)
    qa.post_send(verbs.WorkRequest(1, "WRITE", mr_src, 0, 64, 0, mr_dst.rkey))
    qa.post_send(verbs.WorkRequest(2, "SEND", mr_src, 0, 8))
    qa.post_send(verbs.WorkRequest(3, "READ", mr_src, 0, 8, 0, mr_dst.rkey))  # no REMOTE_READ
    verbs.run([qa])
    assert torch.equal(dst, src)
    assert [c.status for c in qa.cq.poll()] == ["SUCCESS", "RNR_RETRY_EXC_ERR", "REM_ACCESS_ERR"]
    assert qb.cq.poll() == []


def test_slicing_covers_every_byte() -> None:
    for length in (1, 65535, 65536, 65537, 81920, 81921, 10 * 65536 + 3, 10 * 65536 + 16385):
        slices = verbs.slice_request(length)
        assert sum(n for _, n in slices) == length
        assert len(slices) == verbs.slice_count(length)
        assert all(o == i * 65536 for i, (o, _) in enumerate(slices))
        assert all(n <= 65536 + 16384 for _, n in slices)
    # Mooncake folds a tail of at most 16 KiB into the last slice instead of sending it alone
    assert [n for _, n in verbs.slice_request(10 * 65536 + 3)][-1] == 65536 + 3
    assert len(verbs.slice_request(10 * 65536 + 16385)) == 11


def test_ecmp_idle_fraction() -> None:
    rng = random.Random(3)
    trials = [fabric.ecmp_loads(8, 8, rng) for _ in range(20000)]
    idle = sum(t.count(0) for t in trials) / (8 * len(trials))
    assert abs(idle - fabric.expected_idle_fraction(8, 8)) < 0.005
    assert max(fabric.adaptive_loads(8, 8)) == 1


def test_expected_remote_ranks_by_enumeration() -> None:
    import itertools

    E, R, k = 8, 4, 2
    per = E // R
    total = 0
    for pick in itertools.combinations(range(E), k):
        total += len({e // per for e in pick} - {0})  # sender is rank 0
    assert fabric.expected_remote_ranks(E, R, k) == pytest.approx(total / math.comb(E, k))
