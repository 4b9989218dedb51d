"""The acceptance rule of speculative sampling, and the arithmetic of its speed-up.

A draft proposes ``gamma`` tokens ``x_1..x_gamma``, each drawn from its own distribution
``q_i``. The target scores all of them in one pass and gives ``p_1..p_{gamma+1}`` (the last
one conditions on the whole draft). Token ``x_i`` is kept with probability
``min(1, p_i(x_i) / q_i(x_i))``; at the first rejection a replacement is drawn from the residual
``norm(max(0, p_i - q_i))`` and the step ends; if all are kept, a bonus token is drawn from
``p_{gamma+1}``. Every emitted token then follows the target's distribution exactly.
"""

from __future__ import annotations

import torch

ROLE = "taught"


def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """``norm(max(0, p - q))`` over the last dimension: where the target has more mass than
    the draft. Where ``p == q`` exactly the residual is empty; a rejection cannot happen
    there, and ``p`` is returned so the result is always a distribution."""
    r = (p - q).clamp(min=0)
    total = r.sum(-1, keepdim=True)
    return torch.where(total > 0, r / total.clamp(min=1e-30), p)


def verify(
    p: torch.Tensor,
    q: torch.Tensor,
    draft: torch.Tensor,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One verification step for a batch of ``n`` independent drafts.

    ``p``: ``[n, gamma + 1, V]`` target probabilities at each draft position and after it;
    ``q``: ``[n, gamma, V]`` draft probabilities; ``draft``: ``[n, gamma]`` drafted tokens.
    Returns ``(tokens, count)``: ``tokens`` is ``[n, gamma + 1]``, the emitted tokens first and
    ``-1`` after them; ``count`` is how many were emitted (1 to ``gamma + 1``).
    """
    n, gamma = draft.shape
    rows = torch.arange(n)
    u = torch.rand(n, gamma, generator=generator, dtype=p.dtype)
    p_x = p[:, :gamma].gather(-1, draft[..., None])[..., 0]
    q_x = q.gather(-1, draft[..., None])[..., 0]
    keep = u * q_x < p_x  # u < p/q without dividing; a token with q_x = 0 is never drafted
    accepted = keep.long().cumprod(dim=1).sum(dim=1)  # length of the kept prefix
    # Where the prefix ends, sample from the residual; after a full accept, from p_{gamma+1}.
    stop = accepted.clamp(max=gamma - 1)
    last_p = p[rows, accepted]
    last_q = q[rows, stop]
    full = (accepted == gamma)[:, None]
    fix = torch.where(full, last_p, residual(last_p, last_q))
    extra = torch.multinomial(fix, 1, generator=generator)[:, 0]
    positions = torch.arange(gamma + 1)
    tokens = torch.where(positions < accepted[:, None], torch.cat([draft, draft[:, :1]], 1), -1)
    tokens[rows, accepted] = extra
    return tokens, accepted + 1


def acceptance_rate(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """The probability that a token drafted from ``q`` is kept: ``sum_x min(p(x), q(x))``,
    which is one minus the total variation distance between the two."""
    return torch.minimum(p, q).sum(-1)


def match_acceptance(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """The acceptance rate of exact-match verification: the target samples its own token and
    keeps the draft's only if they are equal, ``sum_x p(x) q(x)``."""
    return (p * q).sum(-1)


def expected_tokens(alpha: float, gamma: int) -> float:
    """Tokens per target pass when each drafted token is kept with probability ``alpha``,
    independently: ``1 + alpha + ... + alpha**gamma = (1 - alpha**(gamma+1)) / (1 - alpha)``."""
    if alpha == 1.0:
        return float(gamma + 1)
    return (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)


def speedup(alpha: float, gamma: int, c: float) -> float:
    """Expected speed-up over plain decoding when a draft step costs ``c`` target steps and a
    verification pass of ``gamma + 1`` tokens costs one: tokens per step over cost per step."""
    return expected_tokens(alpha, gamma) / (gamma * c + 1.0)


def best_gamma(alpha: float, c: float, max_gamma: int = 64) -> int:
    """The draft length with the largest :func:`speedup` (0 means: do not speculate)."""
    return max(range(max_gamma + 1), key=lambda g: speedup(alpha, g, c))
