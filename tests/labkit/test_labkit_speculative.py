"""Fast checks of the speculative-decoding labkit (no Sphinx, no upstream objects needed)."""

from __future__ import annotations

import copy

import pytest
import torch
from atlas.labkit.checks.speculative.acceptance import (
    markov_law,
    markov_pair,
    pair_with_acceptance,
    speculative_sequences,
    tv_bound,
    tv_to_law,
)
from atlas.labkit.checks.speculative.common import greedy_reference
from atlas.labkit.speculative import decode, engine, sampling, tree
from atlas.labkit.speculative.model import KVCache, TinyLM


def test_residual_and_acceptance_identities():
    p, q = pair_with_acceptance(0.7, 10, seed=3)
    assert abs(float(sampling.acceptance_rate(p, q)) - 0.7) < 1e-12
    # min(p, q) + (1 - alpha) * residual == p: the one-position proof, numerically
    r = sampling.residual(p, q)
    assert torch.allclose(torch.minimum(p, q) + (1 - 0.7) * r, p)
    assert float(sampling.match_acceptance(p, q)) < 0.7


def test_expected_tokens_and_best_gamma():
    assert sampling.expected_tokens(1.0, 4) == 5.0
    assert abs(sampling.expected_tokens(0.8, 4) - 3.3616) < 1e-12
    assert sampling.best_gamma(0.8, 0.05) == 8
    assert sampling.best_gamma(0.1, 0.5) == 0


def test_verify_output_law_small():
    P, Q = markov_pair(4, seed=2)
    n = 60_000
    seqs = speculative_sequences(P, Q, gamma=2, length=2, n=n, seed=1)
    assert tv_to_law(seqs, markov_law(P, 0, 2), 4) < tv_bound(16, n)


def test_tree_helpers():
    parents = tree.from_choices([[0], [1], [0, 0], [0, 1], [1, 0], [0, 0, 0]])
    assert parents == [-1, 0, 0, 1, 1, 2, 3]
    mask = tree.tree_mask(parents)
    assert mask[6].tolist() == [True, True, False, True, False, False, True]
    assert tree.tree_positions(parents, 10).tolist() == [10, 11, 11, 12, 12, 12, 13]
    assert sorted(tree.tree_paths(parents)) == [[0, 1, 3, 6], [0, 1, 4], [0, 2, 5]]
    path, bonus = tree.greedy_accept([9, 5, 7, 4, 8, 1, 2], parents, [5, 8, 0, 0, 3, 0, 0])
    assert path == [0, 1, 4] and bonus == 3


def test_tree_pass_matches_branches():
    model = TinyLM(vocab=20, layers=2, seed=4)
    parents = tree.from_choices([[0], [1], [0, 0], [0, 1], [1, 0]])
    prompt, tokens = [3, 1, 4, 1, 5], [9, 2, 6, 5, 3, 5]
    cache = KVCache()
    model(torch.tensor(prompt), torch.arange(5), cache)
    visible = torch.cat([torch.ones(6, 5, dtype=torch.bool), tree.tree_mask(parents)], 1)
    fast = model(torch.tensor(tokens), tree.tree_positions(parents, 5), cache, visible)
    for path in tree.tree_paths(parents):
        c = KVCache()
        model(torch.tensor(prompt), torch.arange(5), c)
        for depth, node in enumerate(path):
            slow = model(torch.tensor([tokens[node]]), torch.tensor([5 + depth]), c)[0]
            assert torch.allclose(fast[node], slow, atol=1e-10)


@pytest.mark.parametrize("gamma", [1, 4])
def test_speculative_greedy_is_exact(gamma):
    target = TinyLM(vocab=32, layers=3, seed=2)
    draft = copy.copy(target)
    draft.blocks = target.blocks[:2]
    ref = greedy_reference(target, [1, 2, 3], 20)
    for drafter in (decode.ModelDrafter(draft), decode.PromptLookupDrafter()):
        out, stats = decode.speculative_greedy(target, drafter, [1, 2, 3], 20, gamma)
        assert out == ref
        assert stats.accepted <= stats.drafted


def test_block_pool_reserve_and_rewind():
    pool = engine.BlockPool(block_size=4, free=list(range(10)))
    req = engine.PagedRequest(blocks=[], length=0)
    pool.reserve(req, 7)
    assert len(req.blocks) == 2 and req.length == 7
    pool.reserve(req, 4)  # 11 tokens: a third block
    assert len(req.blocks) == 3
    released = pool.rewind(req, 3)  # back to 8: the third block held only rejected tokens
    assert len(released) == 1 and len(req.blocks) == 2 and req.length == 8


def test_verify_batch():
    inputs = torch.tensor([[5, 1, 2, 3], [5, 9, 2, 3]])
    outputs = torch.tensor([[1, 2, 7, 0], [1, 2, 3, 4]])
    assert engine.verify_batch(inputs, outputs).tolist() == [2, 0]


def test_roofline_speedup_shapes():
    from atlas.labkit.serving.models import LLAMA_3_8B
    from atlas.labkit.serving.roofline import H100_SXM, decode_cost

    assert engine.verify_cost(LLAMA_3_8B, H100_SXM, 4, 512, 0) == decode_cost(
        LLAMA_3_8B, H100_SXM, 4, 512
    )
    s1 = engine.spec_speedup(LLAMA_3_8B, H100_SXM, 1, 256, 3, 0.7)
    s_big = engine.spec_speedup(LLAMA_3_8B, H100_SXM, 4096, 256, 3, 0.7)
    assert s1 > 1.5 > 1.0 > s_big
    b = engine.breakeven_batch(LLAMA_3_8B, H100_SXM, 256, 3, 0.7)
    assert b is not None and engine.spec_speedup(LLAMA_3_8B, H100_SXM, b, 256, 3, 0.7) < 1
