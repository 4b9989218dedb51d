"""A tiny decoder-only transformer whose attention takes an explicit visibility mask.

Verification feeds the target many new tokens at once: a chain of drafted tokens, or a whole
tree of them. Each new token must see the cached context, and among the new tokens only its
own ancestors; and it must sit at the position its depth gives it, not at its index in the
batch. So :meth:`TinyLM.forward` takes, besides the tokens, their positions (rotary embeddings
read them) and a boolean mask of which keys each new query may see.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

ROLE = "taught"


@dataclass
class KVCache:
    """Keys and values of every layer, ``[tokens, heads, head_dim]`` each, in cache order."""

    keys: list[torch.Tensor] = field(default_factory=list)
    values: list[torch.Tensor] = field(default_factory=list)

    def __len__(self) -> int:
        return 0 if not self.keys else self.keys[0].shape[0]

    def truncate(self, length: int) -> None:
        """Drop everything after the first ``length`` tokens (rejected drafts)."""
        self.keys = [k[:length] for k in self.keys]
        self.values = [v[:length] for v in self.values]

    def keep(self, prefix: int, rows: list[int]) -> None:
        """Keep the first ``prefix`` tokens, then only the new rows ``rows`` (indices counted
        from ``prefix``), moved up to be contiguous: the accepted path of a tree."""
        index = torch.tensor(list(range(prefix)) + [prefix + r for r in rows], dtype=torch.long)
        self.keys = [k[index] for k in self.keys]
        self.values = [v[index] for v in self.values]

    def clone(self) -> KVCache:
        return KVCache([k.clone() for k in self.keys], [v.clone() for v in self.values])


def rotary(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate pairs of features of ``x`` (``[n, heads, d]``) by angles that grow with each
    token's position: two tokens at the same position get the same rotation."""
    d = x.shape[-1]
    freqs = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angles = positions.to(x.dtype)[:, None] * freqs[None, :]
    cos, sin = angles.cos()[:, None, :], angles.sin()[:, None, :]
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def masked_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, visible: torch.Tensor
) -> torch.Tensor:
    """Softmax attention of ``n`` queries over ``m`` keys where ``visible[i, j]`` says whether
    query ``i`` may see key ``j``. ``q``: ``[n, h, d]``; ``k``, ``v``: ``[m, h, d]``."""
    scores = torch.einsum("nhd,mhd->hnm", q, k) / q.shape[-1] ** 0.5
    scores = scores.masked_fill(~visible[None], float("-inf"))
    return torch.einsum("hnm,mhd->nhd", torch.softmax(scores, dim=-1), v)


def causal_visibility(cached: int, new: int) -> torch.Tensor:
    """The ordinary mask for ``new`` tokens appended after ``cached`` ones: every cached key,
    and the new keys up to and including one's own."""
    return torch.cat(
        [torch.ones(new, cached, dtype=torch.bool), torch.ones(new, new, dtype=torch.bool).tril()],
        dim=1,
    )


class TinyLM(torch.nn.Module):
    """Pre-norm decoder: embedding, ``layers`` blocks of attention and MLP, norm, head.

    Weights are random (seeded) and scaled so that greedy continuations are varied; the model
    exists to make verification's bookkeeping observable, not to write prose.
    """

    def __init__(
        self,
        vocab: int = 48,
        dim: int = 32,
        layers: int = 2,
        heads: int = 4,
        seed: int = 0,
        dtype: torch.dtype = torch.float64,
    ):
        super().__init__()
        g = torch.Generator().manual_seed(seed)

        def w(*shape: int, scale: float = 1.0) -> torch.nn.Parameter:
            t = torch.randn(*shape, generator=g, dtype=dtype) * scale / shape[0] ** 0.5
            return torch.nn.Parameter(t, requires_grad=False)

        self.heads, self.dim = heads, dim
        self.embed = w(vocab, dim, scale=vocab**0.5)
        self.blocks = [
            {
                "qkv": w(dim, 3 * dim),
                "o": w(dim, dim),
                "up": w(dim, 4 * dim),
                "down": w(4 * dim, dim),
            }
            for _ in range(layers)
        ]
        self.head = w(dim, vocab, scale=4.0)

    @staticmethod
    def _norm(x: torch.Tensor) -> torch.Tensor:
        return x / x.pow(2).mean(-1, keepdim=True).add(1e-6).sqrt()

    def forward(
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor,
        cache: KVCache,
        visible: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits ``[n, vocab]`` for ``n`` new tokens at ``positions``; their keys and values
        are appended to ``cache``. ``visible`` (``[n, len(cache) + n]``) defaults to causal."""
        n, cached = tokens.shape[0], len(cache)
        if visible is None:
            visible = causal_visibility(cached, n)
        x = self.embed[tokens]
        h, d = self.heads, self.dim // self.heads
        for i, blk in enumerate(self.blocks):
            q, k, v = (self._norm(x) @ blk["qkv"]).view(n, 3, h, d).unbind(1)
            q, k = rotary(q, positions), rotary(k, positions)
            if len(cache.keys) <= i:
                cache.keys.append(k[:0])
                cache.values.append(v[:0])
            cache.keys[i] = torch.cat([cache.keys[i], k])
            cache.values[i] = torch.cat([cache.values[i], v])
            att = masked_attention(q, cache.keys[i], cache.values[i], visible)
            x = x + att.reshape(n, h * d) @ blk["o"]
            x = x + torch.nn.functional.gelu(self._norm(x) @ blk["up"]) @ blk["down"]
        return self._norm(x) @ self.head
