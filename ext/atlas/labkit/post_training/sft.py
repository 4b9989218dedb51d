"""The SFT data path: packing conversations into rows, masking, and reducing the loss.

Taught on the page "SFT and its data path". :func:`first_fit` chooses which sequences share a
row; :func:`pack` lays them out with restarted positions and the ``cu_seqlens`` boundaries
that variable-length attention kernels read; :func:`packed_causal_mask` is the mask those
kernels apply implicitly. :func:`reduce_loss` turns per-token losses into one number in the
three ways trainers do, and :func:`token_weights` says what weight each token gets.
"""

from __future__ import annotations

import torch

ROLE = "taught"


def first_fit(lengths: list[int], capacity: int) -> list[list[int]]:
    """Put each sequence, in order, into the first row that still has room for it; open a new
    row when none has. Returns the sequence indices of each row."""
    rows: list[list[int]] = []
    used: list[int] = []
    for i, n in enumerate(lengths):
        for r in range(len(rows)):
            if used[r] + n <= capacity:
                rows[r].append(i)
                used[r] += n
                break
        else:
            rows.append([i])
            used.append(n)
    return rows


def pack(seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One packed row: the concatenated tokens, each token's position within its own
    sequence, and ``cu_seqlens``, the cumulative lengths ``[0, L0, L0 + L1, ...]``."""
    tokens = torch.tensor([t for s in seqs for t in s])
    positions = torch.cat([torch.arange(len(s)) for s in seqs])
    cu = torch.zeros(len(seqs) + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(torch.tensor([len(s) for s in seqs]), 0)
    return tokens, positions, cu


def packed_causal_mask(cu_seqlens: torch.Tensor) -> torch.Tensor:
    """``[T, T]`` boolean mask, True where query ``i`` may attend to key ``j``: same sequence
    and ``j <= i``. Block-diagonal causal: no token sees another sequence of the row."""
    T = int(cu_seqlens[-1])
    seq_id = torch.repeat_interleave(
        torch.arange(len(cu_seqlens) - 1), (cu_seqlens[1:] - cu_seqlens[:-1]).long()
    )
    same = seq_id[:, None] == seq_id[None, :]
    return same & torch.ones(T, T, dtype=torch.bool).tril()


def reduce_loss(
    per_token: torch.Tensor, lengths: list[int], mode: str, max_len: int = 0
) -> torch.Tensor:
    """One scalar from the per-token losses of ``len(lengths)`` responses (the loss-masked
    tokens only, concatenated).

    - ``"sequence"``: the mean over responses of each response's mean;
    - ``"token"``: the sum over all tokens divided by their number;
    - ``"constant"``: the sum divided by ``len(lengths) * max_len``, a constant of the run.
    """
    parts = torch.split(per_token, lengths)
    if mode == "sequence":
        return torch.stack([p.mean() for p in parts]).mean()
    if mode == "token":
        return per_token.sum() / sum(lengths)
    if mode == "constant":
        return per_token.sum() / (len(lengths) * max_len)
    raise ValueError(f"unknown reduction {mode!r}")


def token_weights(lengths: list[int], mode: str, max_len: int = 0) -> torch.Tensor:
    """The weight :func:`reduce_loss` gives each token, by formula: ``1 / (B L_i)`` for a
    token of response ``i`` under ``"sequence"``, ``1 / sum(L)`` under ``"token"``,
    ``1 / (B max_len)`` under ``"constant"``."""
    B, N = len(lengths), sum(lengths)
    if mode == "sequence":
        return torch.cat([torch.full((n,), 1.0 / (B * n), dtype=torch.float64) for n in lengths])
    if mode == "token":
        return torch.full((N,), 1.0 / N, dtype=torch.float64)
    if mode == "constant":
        return torch.full((N,), 1.0 / (B * max_len), dtype=torch.float64)
    raise ValueError(f"unknown reduction {mode!r}")
