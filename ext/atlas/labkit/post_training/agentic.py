"""Agentic rollouts: a multi-turn trajectory as training tokens, and the long tail of a batch.

Taught on the page "Agentic RL". :class:`Trajectory` keeps the tokens of a multi-turn episode
exactly as the engine saw and produced them (token in, token out): every turn's prompt must
extend what is held, the new prompt tokens (tool results, the next user message, template
tokens) get loss mask 0 and the model's output tokens mask 1. :func:`first_k_finish_time`
and :func:`expected_first_k_finish` are the time to collect ``k`` finished episodes out of
``n`` started, by simulation and in closed form.
"""

from __future__ import annotations

import math

ROLE = "taught"


class Trajectory:
    """The token sequence of one episode, with its loss mask and the sampler's log-probs."""

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.loss_mask: list[int] = []
        self.logprobs: list[float] = []
        self.prompt_len = 0

    def add_turn(
        self, prompt_ids: list[int], output_ids: list[int], output_logprobs: list[float]
    ) -> None:
        """Record one call to the engine: the full prompt it was sent and what it generated.
        The prompt must start with every token held so far; its new tail is context."""
        if prompt_ids[: len(self.tokens)] != self.tokens:
            raise ValueError("the prompt does not extend the trajectory: tokens were re-encoded")
        if not self.tokens:
            self.prompt_len = len(prompt_ids)
        tail = prompt_ids[len(self.tokens) :]
        self.tokens += tail + output_ids
        self.loss_mask += [0] * len(tail) + [1] * len(output_ids)
        self.logprobs += [0.0] * len(tail) + list(output_logprobs)

    def response(self) -> tuple[list[int], list[int], list[float]]:
        """Everything after the first prompt: the part the loss sees, with its mask and
        log-probs (tool results and later prompts included, masked out)."""
        p = self.prompt_len
        return self.tokens[p:], self.loss_mask[p:], self.logprobs[p:]


def first_k_finish_time(durations: list[float], k: int) -> float:
    """When ``k`` of the episodes, all started together, have finished: the ``k``-th smallest
    duration. With ``k = len(durations)`` the batch waits for its slowest episode."""
    return sorted(durations)[k - 1]


def expected_first_k_finish(cdf, n: int, k: int, upper: float, steps: int = 4000) -> float:
    """E[k-th smallest of ``n`` independent durations with distribution ``cdf``], bounded by
    ``upper``: ``integral of P(fewer than k done by x) dx``, where the number done by ``x`` is
    binomial with ``n`` trials and probability ``cdf(x)``."""
    dx = upper / steps
    total = 0.0
    for i in range(steps):
        f = cdf((i + 0.5) * dx)
        fewer = sum(math.comb(n, j) * f**j * (1 - f) ** (n - j) for j in range(k))
        total += fewer * dx
    return total
