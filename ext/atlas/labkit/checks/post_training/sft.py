"""Checks of the labs of ``post-training/sft.md``.

The chapter's checks: upstream code at the pins, fakes, toy models.
"""

from __future__ import annotations

from typing import Any

import torch

from atlas.labkit.checks.post_training.common import slime_loss, upstream_defs

ROLE = "check"


class TinyCausalLM(torch.nn.Module):
    """One attention layer and an MLP with learned absolute positions (so that positions
    matter), in float64. ``forward(tokens, positions, mask)`` returns logits ``[T, vocab]``."""

    def __init__(
        self, vocab: int = 32, hidden: int = 16, heads: int = 2, max_pos: int = 64, seed: int = 0
    ) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.heads = heads
        self.tok = torch.nn.Embedding(vocab, hidden, dtype=torch.float64)
        self.pos = torch.nn.Embedding(max_pos, hidden, dtype=torch.float64)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, dtype=torch.float64)
        self.out = torch.nn.Linear(hidden, hidden, dtype=torch.float64)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(hidden, 4 * hidden, dtype=torch.float64),
            torch.nn.GELU(),
            torch.nn.Linear(4 * hidden, hidden, dtype=torch.float64),
        )
        self.head = torch.nn.Linear(hidden, vocab, dtype=torch.float64)

    def forward(
        self, tokens: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        x = self.tok(tokens) + self.pos(positions)
        T, H = x.shape[0], self.heads
        q, k, v = self.qkv(x).view(T, 3, H, -1).unbind(1)
        att = torch.nn.functional.scaled_dot_product_attention(
            q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), attn_mask=mask
        )
        x = x + self.out(att.transpose(0, 1).reshape(T, -1))
        return self.head(x + self.mlp(x))


def sft_examples(seed: int = 0) -> list[tuple[list[int], list[int]]]:
    """Five chat examples of different lengths as (token ids, loss mask): a prompt (mask 0)
    followed by an answer (mask 1)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for prompt_len, answer_len in ((5, 3), (3, 9), (7, 2), (4, 6), (2, 4)):
        ids = torch.randint(0, 32, (prompt_len + answer_len,), generator=g).tolist()
        out.append((ids, [0] * prompt_len + [1] * answer_len))
    return out


def _sum_loss(model, tokens, positions, mask, loss_mask, starts) -> torch.Tensor:
    """Summed next-token cross-entropy over the loss-masked targets; ``starts`` marks the
    first token of each sequence (no prediction crosses into it)."""
    logits = model(tokens, positions, mask)
    nll = torch.nn.functional.cross_entropy(logits[:-1], tokens[1:], reduction="none")
    keep = loss_mask[1:].bool() & ~starts[1:]
    return nll[keep].sum()


def packed_matches_separate(capacity: int = 24) -> dict[str, Any]:
    """Pack the examples of :func:`sft_examples` with :func:`~.sft.first_fit` and
    :func:`~.sft.pack`, run :class:`TinyCausalLM` on the packed rows with
    :func:`~.sft.packed_causal_mask`, and compare the summed loss and every parameter's
    gradient with the same model run on each example alone. Also runs the packed rows with a
    plain causal mask and positions that do not restart, the two classic packing bugs."""
    from atlas.labkit.post_training.sft import first_fit, pack, packed_causal_mask

    ex = sft_examples()
    model = TinyCausalLM()

    def grads_of(loss: torch.Tensor) -> list[torch.Tensor]:
        model.zero_grad()
        loss.backward()
        return [p.grad.clone() for p in model.parameters()]

    alone = sum(
        _sum_loss(
            model,
            torch.tensor(ids),
            torch.arange(len(ids)),
            torch.ones(len(ids), len(ids), dtype=torch.bool).tril(),
            torch.tensor(m),
            torch.zeros(len(ids), dtype=torch.bool),
        )
        for ids, m in ex
    )
    g_alone = grads_of(alone)
    rows = first_fit([len(ids) for ids, _ in ex], capacity)

    def packed_loss(block: bool, restart: bool) -> torch.Tensor:
        total = 0
        for row in rows:
            tokens, positions, cu = pack([ex[i][0] for i in row])
            mask = (
                packed_causal_mask(cu)
                if block
                else torch.ones(len(tokens), len(tokens), dtype=torch.bool).tril()
            )
            pos = positions if restart else torch.arange(len(tokens))
            starts = torch.zeros(len(tokens), dtype=torch.bool)
            starts[cu[:-1].long()] = True
            lm = torch.tensor([b for i in row for b in ex[i][1]])
            total = total + _sum_loss(model, tokens, pos, mask, lm, starts)
        return total

    packed = packed_loss(True, True)
    g_packed = grads_of(packed)
    leaky = packed_loss(False, True).detach()
    unshifted = packed_loss(True, False).detach()
    tokens = sum(len(ids) for ids, _ in ex)
    return {
        "rows": rows,
        "loss_equal": torch.allclose(packed, alone),
        "grads_equal": all(torch.allclose(a, b) for a, b in zip(g_alone, g_packed, strict=True)),
        "leaky_mask_equal": torch.allclose(leaky, alone.detach()),
        "no_restart_equal": torch.allclose(unshifted, alone.detach()),
        "fill": tokens / (len(rows) * capacity),
        "padded_fill": tokens / (len(ex) * max(len(ids) for ids, _ in ex)),
    }


def measured_token_weights(lengths: list[int], mode: str, max_len: int = 0) -> torch.Tensor:
    """The weight of each token in the reduced loss, measured: the gradient of
    :func:`~.sft.reduce_loss` with respect to the per-token losses (by autograd)."""
    from atlas.labkit.post_training.sft import reduce_loss

    x = torch.zeros(sum(lengths), dtype=torch.float64, requires_grad=True)
    reduce_loss(x, lengths, mode, max_len).backward()
    return x.grad


def slime_reduce(per_token: torch.Tensor, lengths: list[int], per_token_loss: bool) -> torch.Tensor:
    """slime's reduction at the pin: ``get_sum_of_sample_mean`` (cp_utils.py) on the response
    tokens, then the division its ``loss_function`` applies for one microbatch on one rank:
    by the number of samples, or, with ``calculate_per_token_loss``, by the number of tokens
    (Megatron divides by that normalizer)."""
    fn = slime_loss().get_sum_of_sample_mean(
        [n for n in lengths],
        lengths,
        [torch.ones(n, dtype=per_token.dtype) for n in lengths],
        None,
        per_token_loss,
    )
    return fn(per_token) / (sum(lengths) if per_token_loss else len(lengths))


def slime_first_fit(lengths: list[int], capacity: int) -> list[list[int]]:
    """slime's ``first_fit_pack`` (seqlen_balancing.py) at the pin."""
    return upstream_defs("slime", "slime/utils/seqlen_balancing.py", ("first_fit_pack",))[
        "first_fit_pack"
    ](lengths, capacity)
