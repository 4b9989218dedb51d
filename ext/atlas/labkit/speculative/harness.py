"""The speculative-decoding labs' harness: seeded distributions, Monte Carlo estimates and
their bounds, the plain decoding reference, and upstream functions run from their source at
the pins (EAGLE's verification and tree buffers, Megatron-LM's verification and KV rewind).

Nothing here is taught; the pages quote the modules next to this one.
"""

from __future__ import annotations

import copy
import math
import random
from typing import Any

import torch

from atlas.labkit.pinned import definitions
from atlas.labkit.speculative.model import KVCache, TinyLM
from atlas.labkit.speculative.sampling import expected_tokens, verify

# -- distributions --------------------------------------------------------------------------


def pair_with_acceptance(alpha: float, vocab: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """A target ``p`` and a draft ``q`` over ``vocab`` tokens with ``sum min(p, q) = alpha``:
    both share ``alpha`` of their mass as the same distribution ``s``; the rest of each lives
    on disjoint halves of the vocabulary, where the two never overlap."""
    g = torch.Generator().manual_seed(seed)
    half = vocab // 2
    s = torch.rand(vocab, generator=g, dtype=torch.float64)
    a = torch.zeros(vocab, dtype=torch.float64)
    b = torch.zeros(vocab, dtype=torch.float64)
    a[:half] = torch.rand(half, generator=g, dtype=torch.float64)
    b[half:] = torch.rand(vocab - half, generator=g, dtype=torch.float64)
    p = alpha * s / s.sum() + (1 - alpha) * b / b.sum()
    q = alpha * s / s.sum() + (1 - alpha) * a / a.sum()
    return p, q


def markov_pair(vocab: int, seed: int = 0, sharpness: float = 2.0) -> tuple[torch.Tensor, ...]:
    """Two random next-token tables ``P[prev, next]`` (the target) and ``Q`` (a mismatched
    draft): a bigram language model and a poor imitation of it."""
    g = torch.Generator().manual_seed(seed)
    P = torch.softmax(sharpness * torch.randn(vocab, vocab, generator=g, dtype=torch.float64), -1)
    noise = sharpness * torch.randn(vocab, vocab, generator=g, dtype=torch.float64)
    Q = torch.softmax(sharpness * 0.5 * torch.log(P) + noise, -1)
    return P, Q


def markov_law(P: torch.Tensor, start: int, length: int) -> torch.Tensor:
    """Exact probability of every sequence of ``length`` tokens after ``start`` under ``P``,
    flattened in base-``vocab`` order (first token most significant)."""
    law = P[start]
    for _ in range(length - 1):
        last = torch.arange(law.numel()) % P.shape[0]  # the last token of each prefix
        law = (law[:, None] * P[last]).reshape(-1)
    return law


def _encode(seqs: torch.Tensor, vocab: int) -> torch.Tensor:
    code = torch.zeros(seqs.shape[0], dtype=torch.long)
    for j in range(seqs.shape[1]):
        code = code * vocab + seqs[:, j]
    return code


def speculative_sequences(
    P: torch.Tensor,
    Q: torch.Tensor,
    gamma: int,
    length: int,
    n: int,
    seed: int = 0,
    rule=verify,
) -> torch.Tensor:
    """``n`` sequences of ``length`` tokens after token 0, each produced by repeated
    speculative steps: draft ``gamma`` tokens from the chain ``Q``, score them with ``P``,
    apply ``rule`` (the taught :func:`verify` unless a variant is given)."""
    g = torch.Generator().manual_seed(seed)
    rows = torch.arange(n)
    out = torch.full((n, length + gamma + 1), -1, dtype=torch.long)
    fill = torch.zeros(n, dtype=torch.long)
    last = torch.zeros(n, dtype=torch.long)
    while int(fill.min()) < length:
        ctx = [last]
        for _ in range(gamma):
            ctx.append(torch.multinomial(Q[ctx[-1]], 1, generator=g)[:, 0])
        draft = torch.stack(ctx[1:], 1)
        q = Q[torch.stack(ctx[:-1], 1)]
        p = P[torch.stack(ctx, 1)]
        tokens, count = rule(p, q, draft, generator=g)
        for j in range(gamma + 1):
            m = (j < count) & (fill + j < length)
            out[rows[m], (fill + j)[m]] = tokens[m, j]
        last = tokens[rows, count - 1]
        fill = fill + count
    return out[:, :length]


def tv_to_law(seqs: torch.Tensor, law: torch.Tensor, vocab: int) -> float:
    """Total variation distance between the empirical law of ``seqs`` and ``law``."""
    counts = torch.bincount(_encode(seqs, vocab), minlength=law.numel()).to(torch.float64)
    return 0.5 * float((counts / seqs.shape[0] - law).abs().sum())


def tv_bound(outcomes: int, n: int, delta: float = 1e-6) -> float:
    """A bound that the empirical TV of ``n`` exact draws over ``outcomes`` values exceeds
    with probability below ``delta``: mean ``<= sqrt((K - 1) / n) / 2`` (Cauchy-Schwarz),
    plus ``sqrt(ln(1/delta) / (2n))`` (McDiarmid: one draw moves the TV by at most ``1/n``)."""
    return 0.5 * math.sqrt((outcomes - 1) / n) + math.sqrt(math.log(1 / delta) / (2 * n))


def resample_from_target(p, q, draft, generator=None):
    """A wrong rule for contrast: on rejection, redraw from ``p`` instead of the residual."""
    n, gamma = draft.shape
    rows = torch.arange(n)
    u = torch.rand(n, gamma, generator=generator, dtype=p.dtype)
    p_x = p[:, :gamma].gather(-1, draft[..., None])[..., 0]
    q_x = q.gather(-1, draft[..., None])[..., 0]
    accepted = (u * q_x < p_x).long().cumprod(1).sum(1)
    extra = torch.multinomial(p[rows, accepted], 1, generator=generator)[:, 0]
    pos = torch.arange(gamma + 1)
    tokens = torch.where(pos < accepted[:, None], torch.cat([draft, draft[:, :1]], 1), -1)
    tokens[rows, accepted] = extra
    return tokens, accepted + 1


def tokens_per_step(alpha: float, gamma: int, n: int = 200_000, vocab: int = 16, seed: int = 0):
    """Mean tokens emitted per verify step, measured by running :func:`verify` on ``n`` drafts
    from a pair with acceptance ``alpha``; returns ``(mean, standard error, closed form)``."""
    p1, q1 = pair_with_acceptance(alpha, vocab, seed)
    g = torch.Generator().manual_seed(seed + 1)
    draft = torch.multinomial(q1, n * gamma, replacement=True, generator=g).view(n, gamma)
    p = p1.expand(n, gamma + 1, vocab)
    q = q1.expand(n, gamma, vocab)
    _, count = verify(p, q, draft, generator=g)
    c = count.to(torch.float64)
    return float(c.mean()), float(c.std() / math.sqrt(n)), expected_tokens(alpha, gamma)


# -- decoding references --------------------------------------------------------------------


def greedy_reference(model: TinyLM, prompt: list[int], n: int) -> list[int]:
    """Plain greedy decoding with no cache: the whole sequence through the model per token."""
    seq = list(prompt)
    for _ in range(n):
        logits = model(torch.tensor(seq), torch.arange(len(seq)), KVCache())
        seq.append(int(logits[-1].argmax()))
    return seq[len(prompt) :]


def early_exit(model: TinyLM, layers: int) -> TinyLM:
    """A self-speculative draft: the target's own first ``layers`` blocks, then its head."""
    d = copy.copy(model)
    d.blocks = model.blocks[:layers]
    return d


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


# -- upstream code at the pins --------------------------------------------------------------




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


def eagle_evaluate_posterior():
    """EAGLE's ``evaluate_posterior`` (eagle/model/utils.py at the pin)."""
    scope = definitions(
        "eagle", "eagle/model/utils.py", ("evaluate_posterior",), {"torch": torch, "random": random}
    )
    return scope["evaluate_posterior"]


def eagle_tree_law(P: torch.Tensor, Q: torch.Tensor, k: int, n: int, seed: int = 0) -> float:
    """Run EAGLE's sampled tree verification ``n`` times on a two-level tree (the draft's top
    ``k`` tokens after the root, and the top ``k`` after each of them, chosen from ``Q``) with
    the bigram target ``P``; return the TV distance between the law of the first two emitted
    tokens and the target's. A token the step does not reach is drawn from ``P``, as the next
    step would."""
    evaluate = eagle_evaluate_posterior()
    vocab = P.shape[0]
    root = 0
    first = torch.topk(Q[root], k).indices.tolist()
    cands, logits = [], []
    for a in first:
        for b in torch.topk(Q[a], k).indices.tolist():
            cands.append([root, a, b])
            logits.append(torch.log(torch.stack([P[root], P[a], P[b]])))
    candidates = torch.tensor(cands)
    logits_t = torch.stack(logits)
    random.seed(seed)
    g = torch.Generator().manual_seed(seed)
    counts = torch.zeros(vocab * vocab, dtype=torch.float64)
    for _ in range(n):
        best, length, sample_p = evaluate(logits_t, candidates, lambda _ids, x: x)
        path = candidates[int(best), 1 : int(length) + 1].tolist()
        path.append(int(torch.multinomial(sample_p, 1, generator=g)))
        while len(path) < 2:
            path.append(int(torch.multinomial(P[path[-1]], 1, generator=g)))
        counts[path[0] * vocab + path[1]] += 1
    law = (P[root][:, None] * P).reshape(-1)
    return 0.5 * float((counts / n - law).abs().sum())


def megatron_mtp_utils() -> dict[str, Any]:
    """``verify_speculative_tokens`` and ``rewind_kv_cache`` from Megatron-LM at the pin."""
    return definitions(
        "megatron",
        "megatron/core/inference/text_generation_controllers/mtp_utils_pytorch.py",
        ("verify_speculative_tokens", "rewind_kv_cache"),
        {"torch": torch},
    )


def megatron_verify_agrees(batch: int, gamma: int, vocab: int, trials: int, seed: int = 0) -> bool:
    """On random batches where drafts often match, our :func:`verify_batch` and Megatron's
    ``verify_speculative_tokens`` (decode requests only) accept the same number per request."""
    from atlas.labkit.speculative.engine import verify_batch

    fn = megatron_mtp_utils()["verify_speculative_tokens"]
    g = torch.Generator().manual_seed(seed)
    for _ in range(trials):
        outputs = torch.randint(vocab, (batch, gamma + 1), generator=g)
        inputs = torch.randint(vocab, (batch, gamma + 1), generator=g)
        copy_mask = torch.rand(batch, gamma, generator=g) < 0.7
        inputs[:, 1:] = torch.where(copy_mask, outputs[:, :-1], inputs[:, 1:])
        last, _mask, _ = fn(inputs.reshape(-1), outputs.reshape(-1), batch, 0, gamma)
        theirs = last - torch.arange(batch) * (gamma + 1)
        if not torch.equal(theirs, verify_batch(inputs, outputs)):
            return False
    return True


def megatron_rewind_agrees(
    requests: int, gamma: int, block_size: int, trials: int, seed: int = 0
) -> dict[str, int]:
    """Random paged states after a step of ``gamma + 1`` tokens per request; rewind them with
    our :class:`BlockPool` and with Megatron's ``rewind_kv_cache`` and compare lengths, last
    offsets, block counts, last block ids, the cleared table entries and the released blocks.
    Returns counts of cases and of disagreements."""
    from atlas.labkit.speculative.engine import BlockPool, PagedRequest

    fn = megatron_mtp_utils()["rewind_kv_cache"]
    g = random.Random(seed)
    cases = released_total = bad = 0
    for _ in range(trials):
        pool = BlockPool(block_size, free=list(range(1000)))
        g.shuffle(pool.free)
        reqs, accepted, prefill = [], [], []
        for _ in range(requests):
            req = PagedRequest(blocks=[], length=0)
            pool.reserve(req, g.randint(1, 5 * block_size))  # the context before the step
            is_prefill = g.random() < 0.2
            pool.reserve(req, 1 if is_prefill else gamma + 1)  # this step's tokens
            reqs.append(req)
            prefill.append(int(is_prefill))
            accepted.append(0 if is_prefill else g.randint(0, gamma))
        width = max(len(r.blocks) for r in reqs) + 1
        table = torch.full((requests, width), -1, dtype=torch.long)
        for i, r in enumerate(reqs):
            table[i, : len(r.blocks)] = torch.tensor(r.blocks)
        state = dict(
            accepted_counts=torch.tensor(accepted),
            prefill_status=torch.tensor(prefill),
            last_kv_block_offset=torch.tensor([(r.length - 1) % block_size for r in reqs]),
            kv_length_offsets=torch.tensor([r.length for r in reqs]),
            kv_block_counts=torch.tensor([len(r.blocks) for r in reqs]),
            last_kv_block_id=torch.tensor([r.blocks[-1] for r in reqs]),
            kv_block_ids=table,
        )
        released, remove = fn(**state, num_speculative_tokens=gamma, block_size_tokens=block_size)
        for i, r in enumerate(reqs):
            cases += 1
            rejected = 0 if prefill[i] else gamma - accepted[i]
            ours = pool.rewind(r, rejected)
            released_total += len(ours)
            theirs = [int(released[i])] if bool(remove[i]) else []
            row = table[i].tolist()
            same = (
                ours == theirs
                and int(state["kv_length_offsets"][i]) == r.length
                and int(state["last_kv_block_offset"][i]) == (r.length - 1) % block_size
                and int(state["kv_block_counts"][i]) == len(r.blocks)
                and int(state["last_kv_block_id"][i]) == r.blocks[-1]
                and row[: len(r.blocks)] == r.blocks
                and all(x == -1 for x in row[len(r.blocks) :])
            )
            bad += not same
    return {"cases": cases, "blocks_released": released_total, "disagreements": bad}


# -- the engine's throughput, simulated -------------------------------------------------------


def simulated_speedup(model, gpu, batch: int, context: int, gamma: int, alpha: float,
                      steps: int = 400, seed: int = 0) -> tuple[float, float]:
    """Run ``steps`` speculative steps for ``batch`` sequences: every draft position kept with
    probability ``alpha`` until the first rejection (drawn, not averaged), each step charged
    ``gamma`` draft steps and one verify pass; plain decoding charged one step per token.
    Returns the measured speed-up and its standard error."""
    from atlas.labkit.serving.roofline import step_cost
    from atlas.labkit.speculative.engine import draft_head_cost, verify_cost

    g = torch.Generator().manual_seed(seed)
    keep = torch.rand(steps, batch, gamma, generator=g) < alpha
    per_step = (keep.long().cumprod(-1).sum(-1) + 1).sum(-1).to(torch.float64)  # tokens/step
    t_step = verify_cost(model, gpu, batch, context, gamma).time_s
    t_step += gamma * draft_head_cost(model, gpu, batch, context).time_s
    t_plain = step_cost(model, gpu, [(context, 1)] * batch).time_s
    rate = per_step / t_step / (batch / t_plain)
    return float(rate.mean()), float(rate.std() / math.sqrt(steps))


# -- token trees ----------------------------------------------------------------------------


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
    visible = torch.cat([torch.ones(len(parents), len(prompt), dtype=torch.bool),
                         tree_mask(parents)], dim=1)
    logits = model(torch.tensor(tokens), tree_positions(parents, len(prompt)), cache, visible)
    path, bonus = greedy_accept(tokens, parents, logits.argmax(-1).tolist())
    cache.keep(len(prompt), path)
    text = [tokens[i] for i in path] + [bonus]
    while len(text) < len(truth):
        pos = torch.tensor([len(prompt) + len(text) - 1])
        text.append(int(model(torch.tensor(text[-1:]), pos, cache)[0].argmax()))
    return {"accepted": len(path) - 1, "cache_after_round": len(prompt) + len(path),
            "equals_greedy": text == truth}
