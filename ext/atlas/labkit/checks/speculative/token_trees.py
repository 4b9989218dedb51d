"""Checks of the labs of ``speculative/token-trees.md``.

The chapter's checks: seeded distributions, Monte Carlo estimates and their bounds, the plain
decoding reference, and upstream functions run from their source at the pins (EAGLE's
verification and tree buffers, Megatron-LM's verification and KV rewind).
"""

from __future__ import annotations

import copy

import torch

from atlas.labkit.checks.speculative.common import greedy_reference
from atlas.labkit.pinned import definitions
from atlas.labkit.speculative.model import KVCache, TinyLM

ROLE = "check"


def branch_by_branch(
    model: TinyLM, prompt: list[int], tokens: list[int], parents: list[int], paths: list[list[int]]
) -> torch.Tensor:
    """Logits of every tree node computed the slow way: for each root-to-leaf path, the
    prompt's cache copied and the path decoded one token at a time, causally."""
    from atlas.labkit.speculative.model import KVCache as _Cache

    base = _Cache()
    model(torch.tensor(prompt), torch.arange(len(prompt)), base)
    out = torch.full((len(tokens), model.head.shape[1]), float("nan"), dtype=torch.float64)
    for path in paths:
        cache = base.clone()
        for depth, node in enumerate(path):
            pos = torch.tensor([len(prompt) + depth])
            out[node] = model(torch.tensor([tokens[node]]), pos, cache)[0]
    return out


class _NoTimer:
    """EAGLE wraps its buffer builder in a CUDA-synchronising timer; on a CPU it does nothing."""

    def __init__(self, name):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def eagle_tree_buffers(choices: list[list[int]]) -> dict[str, torch.Tensor]:
    """EAGLE's ``generate_tree_buffers`` (eagle/model/utils.py at the pin) on ``choices``."""
    scope = definitions(
        "eagle",
        "eagle/model/utils.py",
        ("generate_tree_buffers", "pad_path"),
        {"torch": torch, "copy": copy, "List": list, "TOPK": 10, "Timer": _NoTimer},
    )
    return scope["generate_tree_buffers"](choices, device="cpu")


def eagle_choices(name: str = "mc_sim_7b_63") -> list[list[int]]:
    """A static tree shape from EAGLE's ``eagle/model/choices.py`` at the pin."""
    return definitions("eagle", "eagle/model/choices.py", [name])[name]


def tree_pass_equals_branches(choices, vocab: int = 48, prompt_len: int = 7, seed: int = 0):
    """Verify a random token tree of shape ``choices`` in one masked pass of a tiny target,
    and decode each root-to-leaf path separately; return the nodes, the paths and the largest
    difference between the two sets of logits."""
    from atlas.labkit.speculative.tree import from_choices, tree_mask, tree_paths, tree_positions

    g = torch.Generator().manual_seed(seed)
    model = TinyLM(vocab=vocab, layers=2, seed=seed)
    parents = from_choices(choices)
    prompt = torch.randint(vocab, (prompt_len,), generator=g).tolist()
    tokens = torch.randint(vocab, (len(parents),), generator=g).tolist()
    cache = KVCache()
    model(torch.tensor(prompt), torch.arange(prompt_len), cache)
    visible = torch.cat(
        [torch.ones(len(parents), prompt_len, dtype=torch.bool), tree_mask(parents)], dim=1
    )
    one_pass = model(torch.tensor(tokens), tree_positions(parents, prompt_len), cache, visible)
    paths = tree_paths(parents)
    slow = branch_by_branch(model, prompt, tokens, parents, paths)
    return {
        "nodes": len(parents),
        "paths": len(paths),
        "cache_rows_written": len(cache) - prompt_len,
        "max_abs_diff": float((one_pass - slow).abs().max()),
    }


def tree_round_then_decode(parents: list[int], planted: int, more: int = 12, seed: int = 1):
    """One greedy tree round on a tiny target, then plain decoding from the compacted cache.

    The tree's tokens are random except along the path to its deepest leaf, where the first
    ``planted`` nodes carry the target's own greedy tokens. After the round, the cache keeps
    only the accepted path (:meth:`KVCache.keep`) and decoding continues from it for ``more``
    tokens. Returns the accepted count and whether the text equals plain greedy decoding."""
    from atlas.labkit.speculative.tree import greedy_accept, tree_mask, tree_paths, tree_positions

    g = torch.Generator().manual_seed(seed)
    model = TinyLM(vocab=48, layers=2, seed=seed)
    prompt = torch.randint(48, (6,), generator=g).tolist()
    depth = max(len(p) for p in tree_paths(parents)) - 1
    truth = greedy_reference(model, prompt, depth + 1 + more)
    tokens = torch.randint(48, (len(parents),), generator=g).tolist()
    deepest = max(tree_paths(parents), key=len)
    for k, node in enumerate(deepest):
        if k <= planted:  # node 0 is the root: the target's first token
            tokens[node] = truth[k]
    cache = KVCache()
    logits = model(torch.tensor(prompt), torch.arange(len(prompt)), cache)
    assert int(logits[-1].argmax()) == tokens[0]
    visible = torch.cat(
        [torch.ones(len(parents), len(prompt), dtype=torch.bool), tree_mask(parents)], dim=1
    )
    logits = model(torch.tensor(tokens), tree_positions(parents, len(prompt)), cache, visible)
    path, bonus = greedy_accept(tokens, parents, logits.argmax(-1).tolist())
    cache.keep(len(prompt), path)
    text = [tokens[i] for i in path] + [bonus]
    while len(text) < len(truth):
        pos = torch.tensor([len(prompt) + len(text) - 1])
        text.append(int(model(torch.tensor(text[-1:]), pos, cache)[0].argmax()))
    return {
        "accepted": len(path) - 1,
        "cache_after_round": len(prompt) + len(path),
        "equals_greedy": text == truth,
    }
