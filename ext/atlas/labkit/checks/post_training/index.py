"""Checks of the labs of ``post-training/index.md``.

The chapter's checks: upstream code at the pins, fakes, toy models.
"""

from __future__ import annotations

import math

import torch

ROLE = "check"


def toy_model_config():
    """A registry :class:`Model` for the toy decoder of :class:`ToyLM` (two layers, GQA)."""
    from atlas.labkit.registry.schema import MLP, Attention, Model

    return Model(
        name="toy",
        family="toy",
        layers=2,
        hidden=32,
        vocab=64,
        attention=Attention(kind="GQA", q_heads=4, kv_heads=2, head_dim=8),
        mlp=MLP(intermediate=48),
        tied_embeddings=False,
        context=256,
        position="none",
    )


class ToyLM(torch.nn.Module):
    """A Llama-shaped decoder built from a registry :class:`Model`: RMSNorm, grouped-query
    attention, SwiGLU MLP, untied output head. Attention runs one query at a time over its own
    prefix, so a counter sees exactly the causal work; ``decode`` appends to a KV cache."""

    def __init__(self, m, seed: int = 0) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        a = m.attention
        self.m, self.h, self.hq, self.hkv, self.d = m, m.hidden, a.q_heads, a.kv_heads, a.head_dim

        def w(o: int, i: int) -> torch.nn.Parameter:
            return torch.nn.Parameter(
                torch.randn(o, i, generator=g, dtype=torch.float64) / math.sqrt(i)
            )

        self.embed = torch.nn.Parameter(
            torch.randn(m.vocab, m.hidden, generator=g, dtype=torch.float64)
        )
        self.layers = torch.nn.ModuleList()
        for _ in range(m.layers):
            layer = torch.nn.Module()
            layer.q, layer.k, layer.v = (
                w(self.hq * self.d, self.h),
                w(self.hkv * self.d, self.h),
                w(self.hkv * self.d, self.h),
            )
            layer.o = w(self.h, self.hq * self.d)
            layer.gate, layer.up = w(m.mlp.intermediate, self.h), w(m.mlp.intermediate, self.h)
            layer.down = w(self.h, m.mlp.intermediate)
            self.layers.append(layer)
        self.head = w(m.vocab, m.hidden)

    @staticmethod
    def _norm(x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

    def _attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """One query ``[hq, d]`` over keys and values ``[n, hkv, d]``."""
        rep = self.hq // self.hkv
        k = k.repeat_interleave(rep, dim=1).permute(1, 2, 0)  # [hq, d, n]
        v = v.repeat_interleave(rep, dim=1).transpose(0, 1)  # [hq, n, d]
        scores = torch.bmm(q[:, None, :], k) / math.sqrt(self.d)  # [hq, 1, n]
        return torch.bmm(torch.softmax(scores, -1), v)[:, 0, :]

    def _layer(self, layer, x: torch.Tensor, cache: list | None, start: int) -> torch.Tensor:
        n = x.shape[0]
        y = self._norm(x)
        q = (y @ layer.q.T).view(n, self.hq, self.d)
        k = (y @ layer.k.T).view(n, self.hkv, self.d)
        v = (y @ layer.v.T).view(n, self.hkv, self.d)
        if cache is not None:
            cache[0] = torch.cat([cache[0], k]) if cache[0] is not None else k
            cache[1] = torch.cat([cache[1], v]) if cache[1] is not None else v
            k, v = cache
        out = torch.stack(
            [self._attend(q[i], k[: start + i + 1], v[: start + i + 1]) for i in range(n)]
        )
        x = x + out.reshape(n, -1) @ layer.o.T
        y = self._norm(x)
        return x + (torch.nn.functional.silu(y @ layer.gate.T) * (y @ layer.up.T)) @ layer.down.T

    def forward(
        self, tokens: torch.Tensor, caches: list | None = None, start: int = 0
    ) -> torch.Tensor:
        x = self.embed[tokens]
        for i, layer in enumerate(self.layers):
            x = self._layer(layer, x, caches[i] if caches is not None else None, start)
        return self._norm(x) @ self.head.T


def counted_flops(fn) -> int:
    """The FLOPs PyTorch's ``FlopCounterMode`` counts while ``fn()`` runs (matrix products)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def measured_rl_flops(prompt_len: int = 6, response_len: int = 10) -> dict[str, int]:
    """FLOPs of the three kinds of work of an RL step on :class:`ToyLM`, counted: generating
    ``response_len`` tokens one at a time with a KV cache after a prompt, one forward over the
    whole sequence (scoring it), and a forward and backward over it (training on it)."""
    m = toy_model_config()
    lm = ToyLM(m)
    tokens = torch.arange(prompt_len + response_len) % m.vocab

    def generate() -> None:
        with torch.no_grad():
            caches = [[None, None] for _ in lm.layers]
            lm(tokens[:prompt_len], caches, 0)
            for i in range(prompt_len, prompt_len + response_len - 1):
                lm(tokens[i : i + 1], caches, i)

    def score() -> None:
        with torch.no_grad():
            lm(tokens)

    def train() -> None:
        lm(tokens).sum().backward()

    return {
        "generate": counted_flops(generate),
        "score": counted_flops(score),
        "train": counted_flops(train),
    }
