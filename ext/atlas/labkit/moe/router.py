"""The router of a mixture-of-experts layer and the three ways to balance its load.

Everything works on a batch of router logits ``[T, E]`` (T tokens, E experts) and returns plain
tensors, so each function can be set beside the production code it mirrors.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

ROLE = "taught"


def scores_of(logits: torch.Tensor, score: str) -> torch.Tensor:
    """Per-expert affinities: a softmax over the experts, or an independent sigmoid each."""
    if score == "softmax":
        return torch.softmax(logits, dim=-1)
    if score == "sigmoid":
        return torch.sigmoid(logits)
    raise ValueError(f"unknown score function {score!r}")


def topk_route(
    logits: torch.Tensor,
    k: int,
    score: str = "softmax",
    bias: torch.Tensor | None = None,
    groups: int | None = None,
    group_topk: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k routing. Returns ``(gates, experts)``, both ``[T, k]``.

    softmax: the k largest logits, then a softmax over those k (which equals the full softmax's
    top-k probabilities renormalised to sum to one).
    sigmoid: independent affinities ``s = sigmoid(logits)``; the experts are chosen on
    ``s + bias`` (the bias steers selection only), the gates are the chosen ``s`` renormalised.
    groups/group_topk: split the experts into ``groups`` equal groups (devices or nodes), rank
    each group by the sum of its best ``k // group_topk`` affinities, and choose the k experts
    among the best ``group_topk`` groups only.
    """
    s = logits if score == "softmax" else scores_of(logits, score)
    choose = s if bias is None else s + bias
    if groups:
        t, e = choose.shape
        per_group = choose.view(t, groups, e // groups)
        group_score = per_group.topk(k // group_topk, dim=-1).values.sum(-1)
        keep = torch.zeros_like(group_score, dtype=torch.bool)
        keep.scatter_(1, group_score.topk(group_topk, dim=-1).indices, True)
        mask = keep.unsqueeze(-1).expand(t, groups, e // groups).reshape(t, e)
        choose = choose.masked_fill(~mask, float("-inf"))
    experts = choose.topk(k, dim=-1).indices
    picked = s.gather(1, experts)
    if score == "softmax":
        gates = torch.softmax(picked, dim=-1)
    else:
        gates = picked / picked.sum(-1, keepdim=True) if k > 1 else picked
    return gates, experts


def load_of(experts: torch.Tensor, num_experts: int) -> torch.Tensor:
    """Assignments per expert: how many (token, expert) pairs each expert receives."""
    return torch.bincount(experts.reshape(-1), minlength=num_experts)


def max_violation(load: torch.Tensor) -> float:
    """How far the busiest expert is above the mean load, as a fraction of the mean."""
    load = load.double()
    return (load.max() / load.mean() - 1).item()


def aux_loss(probs: torch.Tensor, experts: torch.Tensor, k: int) -> torch.Tensor:
    """The Switch/GShard load-balancing loss ``E * sum_i f_i P_i``.

    ``f_i``: the share of the ``k T`` assignments that went to expert ``i`` (counted, no
    gradient). ``P_i``: the mean over tokens of the router's normalised probability for ``i``
    (differentiable). Its value is 1 when both are uniform.
    """
    t, e = probs.shape
    f = load_of(experts, e).to(probs.dtype) / (k * t)
    return e * (f * probs.mean(0)).sum()


def seq_aux_loss(probs: torch.Tensor, experts: torch.Tensor, k: int, seq_len: int) -> torch.Tensor:
    """DeepSeek-V3's sequence-wise balance loss: the same loss, computed within each sequence
    of ``seq_len`` consecutive tokens and averaged over the sequences."""
    per_seq = [
        aux_loss(probs[i : i + seq_len], experts[i : i + seq_len], k)
        for i in range(0, probs.shape[0], seq_len)
    ]
    return torch.stack(per_seq).mean()


def z_loss(logits: torch.Tensor) -> torch.Tensor:
    """ST-MoE's router z-loss: the mean squared log-partition ``(log sum_i exp z_i)^2``."""
    return torch.logsumexp(logits, dim=-1).square().mean()


def update_bias(bias: torch.Tensor, load: torch.Tensor, rate: float) -> torch.Tensor:
    """The auxiliary-loss-free update: raise the bias of every expert below the mean load by
    ``rate``, lower it for every expert above it (a sign step, no gradient)."""
    load = load.to(bias.dtype)
    return bias + rate * torch.sign(load.mean() - load)


def capacity(tokens: int, num_experts: int, k: int, capacity_factor: float) -> int:
    """Rows an expert accepts from a group of ``tokens`` tokens: ``ceil(phi * k T / E)``."""
    return math.ceil(tokens * k / num_experts * capacity_factor)


def keep_within_capacity(
    gates: torch.Tensor, experts: torch.Tensor, num_experts: int, cap: int, policy: str = "probs"
) -> torch.Tensor:
    """Which assignments survive ``cap`` rows per expert. ``probs`` keeps each expert's
    highest-gate assignments; ``position`` keeps the earliest tokens. Returns a ``[T, k]`` mask."""
    flat_e, flat_g = experts.reshape(-1), gates.reshape(-1)
    order = torch.arange(flat_e.numel())
    if policy == "probs":  # earliest first among equal gates, highest gate first otherwise
        order = torch.argsort(-flat_g, stable=True)
    elif policy != "position":
        raise ValueError(f"unknown drop policy {policy!r}")
    onehot = F.one_hot(flat_e[order], num_experts)
    rank_in_expert = ((onehot.cumsum(0) - 1) * onehot).sum(-1)
    keep = torch.empty_like(flat_e, dtype=torch.bool)
    keep[order] = rank_in_expert < cap
    return keep.view_as(experts)


def balance_run(
    method: str,
    steps: int = 300,
    num_experts: int = 8,
    k: int = 2,
    hidden: int = 16,
    tokens: int = 1024,
    skew: float = 1.2,
    aux_coeff: float = 10.0,
    bias_rate: float = 1e-2,
    seed: int = 0,
) -> dict[str, object]:
    """Train a router on a skewed stream of tokens with one balancing method.

    The data are E clusters whose shares fall as ``1 / rank**skew``; a token's label is its
    cluster, and the router learns, by cross-entropy on its logits, to give that expert the top
    score. ``method`` is ``none`` (task loss only), ``aux`` (task loss plus ``aux_coeff`` times
    the auxiliary loss on the softmax probabilities) or ``bias`` (task loss only; sigmoid
    affinities plus an expert bias, updated after every step by :func:`update_bias`, choose the
    top k). Returns the max violation of the load every 50 steps (``trace``) and, on a fresh
    batch at the end, ``max_violation`` and three shares of tokens that measure two different
    things. What the scores say: ``accuracy``, the share whose highest logit (bias excluded) is
    their own cluster's expert; the bias cannot change it, so it is blind to what the bias does.
    What the routing does: ``routed``, the share whose own expert is among the k experts they
    are sent to, and ``first``, the share whose own expert is the routing's first choice (the
    largest score plus bias), both with the bias included; and ``bound``, the largest share any
    routing with the same per-expert loads could send to their own expert.
    """
    gen = torch.Generator().manual_seed(seed)
    centers = torch.randn(num_experts, hidden, generator=gen, dtype=torch.float64)
    shares = 1 / torch.arange(1, num_experts + 1, dtype=torch.float64) ** skew
    shares = shares / shares.sum()

    def batch() -> tuple[torch.Tensor, torch.Tensor]:
        label = torch.multinomial(shares, tokens, replacement=True, generator=gen)
        x = centers[label] + 0.7 * torch.randn(tokens, hidden, generator=gen, dtype=torch.float64)
        return x, label

    router = torch.zeros(num_experts, hidden, dtype=torch.float64, requires_grad=True)
    bias = torch.zeros(num_experts, dtype=torch.float64) if method == "bias" else None
    opt = torch.optim.Adam([router], lr=0.05)
    trace = []
    for step in range(steps):
        x, label = batch()
        logits = x @ router.T
        loss = F.cross_entropy(logits, label)
        _, experts = topk_route(logits.detach(), k, "sigmoid", bias)
        load = load_of(experts, num_experts)
        if step % 50 == 0:
            trace.append(round(max_violation(load), 2))
        if method == "aux":
            loss = loss + aux_coeff * aux_loss(torch.softmax(logits, -1), experts, k)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if bias is not None:
            bias = update_bias(bias, load, bias_rate)
    x, label = batch()
    with torch.no_grad():
        logits = x @ router.T
        _, experts = topk_route(logits, k, "sigmoid", bias)
    own = experts == label.unsqueeze(-1)  # [T, k], experts ordered by score plus bias
    # No routing with these loads can send more tokens of cluster i to expert i than the
    # cluster has tokens or the expert receives assignments: a bound set by balance alone.
    load = load_of(experts, num_experts)
    bound = torch.minimum(torch.bincount(label, minlength=num_experts), load).sum().item()
    return {
        "trace": trace,
        "max_violation": round(max_violation(load), 3),
        "accuracy": round((logits.argmax(-1) == label).double().mean().item(), 3),
        "routed": round(own.any(-1).double().mean().item(), 3),
        "first": round(own[:, 0].double().mean().item(), 3),
        "bound": round(bound / tokens, 3),
    }
