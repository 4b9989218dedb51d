"""Checks of the labs of ``speculative/acceptance.md``.

The chapter's checks: seeded distributions, Monte Carlo estimates and their bounds, the plain
decoding reference, and upstream functions run from their source at the pins (EAGLE's
verification and tree buffers, Megatron-LM's verification and KV rewind).
"""

from __future__ import annotations

import math
import random

import torch

from atlas.labkit.pinned import definitions
from atlas.labkit.speculative.sampling import expected_tokens, verify

ROLE = "check"


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


def chain_accepted_length(P: torch.Tensor, keep: torch.Tensor, gamma: int) -> float:
    """Exact mean number of drafted tokens kept per step on the bigram chain, from a uniformly
    drawn last token: ``keep[a, b]`` is the probability that the draft proposes ``b`` after
    ``a`` *and* the rule keeps it, so ``Pr[first j kept] = u^T keep^j 1`` and the mean is the
    sum over ``j = 1..gamma``. Computed by matrix powers, with no sampling and no rule run."""
    vocab = P.shape[0]
    row = torch.full((vocab,), 1.0 / vocab, dtype=torch.float64)
    total = 0.0
    for _ in range(gamma):
        row = row @ keep
        total += float(row.sum())
    return total


def megatron_exact_match(
    P: torch.Tensor, Q: torch.Tensor, gamma: int, n: int, greedy_draft: bool, seed: int = 0
) -> tuple[float, float]:
    """Mean drafted tokens kept per step when Megatron-LM's ``verify_speculative_tokens`` (at
    the pin) compares ``n`` drafts with tokens the target samples at every position.

    The draft is the bigram chain ``Q``, either sampled (as Megatron's MTP draft samples with the
    request's sampling parameters) or greedy (its argmax, a point mass); the target ``P`` samples
    ``gamma + 1`` tokens, one after each input. Returns ``(mean, standard error)``."""
    from atlas.labkit.checks.speculative.serving import megatron_mtp_utils

    verify_fn = megatron_mtp_utils()["verify_speculative_tokens"]
    vocab = P.shape[0]
    g = torch.Generator().manual_seed(seed)
    inputs = [torch.randint(vocab, (n,), generator=g)]  # the last accepted token
    for _ in range(gamma):
        if greedy_draft:
            inputs.append(Q[inputs[-1]].argmax(-1))
        else:
            inputs.append(torch.multinomial(Q[inputs[-1]], 1, generator=g)[:, 0])
    rows = torch.stack(inputs, 1)  # [n, gamma + 1]
    outputs = torch.multinomial(P[rows.reshape(-1)], 1, generator=g).view(n, gamma + 1)
    last, _mask, _ = verify_fn(rows.reshape(-1), outputs.reshape(-1), n, 0, gamma)
    kept = (last - torch.arange(n) * (gamma + 1)).to(torch.float64)  # drafts kept per request
    return float(kept.mean()), float(kept.std() / math.sqrt(n))


def greedy_draft_table(Q: torch.Tensor) -> torch.Tensor:
    """The point-mass draft of ``Q``: one-hot on each row's argmax."""
    return torch.nn.functional.one_hot(Q.argmax(-1), Q.shape[0]).to(Q.dtype)
