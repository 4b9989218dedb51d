"""Context parallelism: ring attention and all-to-all (Ulysses) attention over a split sequence.

Ring attention keeps each rank's queries in place and passes key/value blocks around the ring;
each rank folds every block it sees into its output with the online-softmax merge, carrying the
log-sum-exp of each query row so that partial softmaxes over different key blocks combine
exactly. Under a causal mask a contiguous split gives the last rank most of the work, so the
balanced split gives rank ``r`` sequence chunks ``r`` and ``2P - 1 - r`` of ``2P``.

Ulysses re-partitions instead: an all-to-all turns "all heads, ``1/P`` of the sequence" into
"``1/P`` of the heads, the whole sequence", attention runs unchanged, and a second all-to-all
turns it back. Tensors are ``[sequence, heads, head_dim]``.
"""

from __future__ import annotations

import math

import torch
import torch.distributed as dist

from atlas.labkit.parallel.comm import CommLog

ROLE = "taught"

DTYPE = torch.float64


def block_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, q_pos: torch.Tensor, k_pos: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of queries at ``q_pos`` over keys at ``k_pos`` (causal: key <= query).

    Returns the block's normalised output ``[s_q, h, d]`` and the log-sum-exp of each row's
    scores ``[s_q, h]``; a row with no visible key gets output 0 and log-sum-exp ``-inf``.
    """
    scores = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(q.shape[-1])
    visible = k_pos[None, :] <= q_pos[:, None]
    scores = scores.masked_fill(~visible[None], float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)  # [h, s_q]
    probs = torch.exp(scores - lse[..., None]).nan_to_num(0.0)
    return torch.einsum("hqk,khd->qhd", probs, v), lse.T


def merge(
    out: torch.Tensor, lse: torch.Tensor, out_b: torch.Tensor, lse_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Combine two partial attentions over disjoint key sets into attention over their union.

    With ``L = log(e^lse + e^lse_b)``, the union's output is ``e^(lse - L) out +
    e^(lse_b - L) out_b``: each part is re-weighted by its share of the total softmax mass.
    """
    new = torch.logaddexp(lse, lse_b)
    w_a = torch.exp(lse - new).nan_to_num(0.0)[..., None]
    w_b = torch.exp(lse_b - new).nan_to_num(0.0)[..., None]
    return w_a * out + w_b * out_b, new


def shard_positions(seq: int, rank: int, world: int, balanced: bool) -> torch.Tensor:
    """Sequence positions rank ``rank`` holds: one contiguous chunk, or chunks ``r`` and
    ``2P - 1 - r`` of ``2P`` (balanced for a causal mask)."""
    if not balanced:
        size = seq // world
        return torch.arange(rank * size, (rank + 1) * size)
    size = seq // (2 * world)
    first = torch.arange(rank * size, (rank + 1) * size)
    second = torch.arange((2 * world - 1 - rank) * size, (2 * world - rank) * size)
    return torch.cat([first, second])


def ring_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    pos: torch.Tensor,
    log: CommLog | None = None,
) -> tuple[torch.Tensor, int]:
    """Causal attention of local queries over the keys of all ranks, passed around a ring.

    At each of the ``P`` steps the rank attends to the key/value block it holds (skipping it
    if the mask hides it entirely), merges the result, and sends the block on to ``rank + 1``
    while receiving the next from ``rank - 1``. Returns the output and the number of visible
    (query, key) pairs computed: the rank's share of the work.
    """
    rank, world = dist.get_rank(), dist.get_world_size()
    log = log if log is not None else CommLog()
    out = torch.zeros_like(q)
    lse = torch.full(q.shape[:2], float("-inf"), dtype=q.dtype)
    block = (k, v, pos)
    work = 0
    for step in range(world):
        bk, bv, bpos = block
        if step < world - 1:  # start passing the block on before computing with it
            nxt = tuple(torch.empty_like(t) for t in block)
            reqs = []
            for i, (t, buf) in enumerate(zip(block, nxt, strict=True)):
                tag = step * 3 + i
                reqs.append(dist.isend(t.contiguous(), dst=(rank + 1) % world, tag=tag))
                reqs.append(dist.irecv(buf, src=(rank - 1) % world, tag=tag))
            log.add("send", bk.numel() + bv.numel())
        visible = int((bpos[None, :] <= pos[:, None]).sum())
        if visible:
            out_b, lse_b = block_attention(q, bk, bv, pos, bpos)
            out, lse = merge(out, lse, out_b, lse_b)
            work += visible
        if step < world - 1:
            for req in reqs:
                req.wait()
            block = nxt
    return out, work


def _all_to_all(x: torch.Tensor, log: CommLog) -> torch.Tensor:
    x = x.contiguous()  # before empty_like, which would copy a transpose's strides
    out = torch.empty_like(x)
    log.add("all_to_all", x.numel())
    dist.all_to_all_single(out, x)
    return out


def ulysses_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log: CommLog | None = None
) -> torch.Tensor:
    """Causal attention on a contiguous sequence shard via two all-to-alls over heads."""
    world = dist.get_world_size()
    log = log if log is not None else CommLog()
    s_local, heads, dim = q.shape

    def to_heads(x: torch.Tensor) -> torch.Tensor:  # [s/P, H, d] -> [s, H/P, d]
        x = x.reshape(s_local, world, heads // world, dim).transpose(0, 1)
        return _all_to_all(x, log).reshape(world * s_local, heads // world, dim)

    positions = torch.arange(world * s_local)
    out, _ = block_attention(to_heads(q), to_heads(k), to_heads(v), positions, positions)
    out = out.reshape(world, s_local, heads // world, dim)  # [P (seq chunk), s/P, H/P, d]
    out = _all_to_all(out, log)  # [P (head group), s/P, H/P, d]
    return out.transpose(0, 1).reshape(s_local, heads, dim)
