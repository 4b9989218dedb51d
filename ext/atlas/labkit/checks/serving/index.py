"""Checks of the labs of ``serving/index.md``.

The chapter's checks: the checks, traces and demos its labs run.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from atlas.labkit.serving.models import ModelConfig

ROLE = "check"


def measured_step_flops(model: object, chunks: list[tuple[int, int]], seed: int = 0) -> int:
    """FLOPs of one forward step counted by PyTorch's ``FlopCounterMode`` on a plain decoder
    with ``model``'s shapes (use a small configuration: the weights are real tensors).

    Written from the architecture, not from :func:`..roofline.step_cost`: for each sequence
    (cached tokens ``c``, new tokens ``n``) the new tokens go through every layer (Q, K, V, O,
    a SwiGLU MLP), each query attends to the ``c`` cached keys and to the new keys up to its
    own position (grouped-query heads), and the output head runs on the last new token only.
    """
    from torch.utils.flop_counter import FlopCounterMode

    m = model
    gen = torch.Generator().manual_seed(seed)

    def w(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen) / shape[-1] ** 0.5

    h, a, kv, d, f = m.hidden_size, m.num_heads, m.num_kv_heads, m.head_dim, m.intermediate_size
    layers = [
        dict(
            q=w(a * d, h),
            k=w(kv * d, h),
            v=w(kv * d, h),
            o=w(h, a * d),
            g=w(f, h),
            u=w(f, h),
            dn=w(h, f),
        )
        for _ in range(m.num_layers)
    ]
    head = w(m.vocab_size, h)
    caches = [
        [
            (torch.randn(c, kv, d, generator=gen), torch.randn(c, kv, d, generator=gen))
            for _ in range(m.num_layers)
        ]
        for c, _ in chunks
    ]
    with FlopCounterMode(display=False) as counter:
        for (c, n), cache in zip(chunks, caches, strict=True):
            x = torch.randn(n, h, generator=gen)
            for layer, (k_old, v_old) in zip(layers, cache, strict=True):
                q = (x @ layer["q"].T).view(n, a, d)
                k = torch.cat([k_old, (x @ layer["k"].T).view(n, kv, d)])
                v = torch.cat([v_old, (x @ layer["v"].T).view(n, kv, d)])
                k, v = k.repeat_interleave(a // kv, 1), v.repeat_interleave(a // kv, 1)
                out = []
                for i in range(n):  # query i sees the cache and new keys 0..i
                    keys = c + i + 1
                    qi = q[i][:, None, :]  # [a, 1, d]
                    scores = torch.bmm(qi, k[:keys].permute(1, 2, 0)) / d**0.5
                    out.append(torch.bmm(torch.softmax(scores, -1), v[:keys].transpose(0, 1)))
                ctx = torch.cat(out, dim=1).transpose(0, 1).reshape(n, a * d)
                x = x + ctx @ layer["o"].T
                x = x + (F.silu(x @ layer["g"].T) * (x @ layer["u"].T)) @ layer["dn"].T
            x[-1:] @ head.T
    return int(counter.get_total_flops())


# A small configuration for counting: every tensor of it is real and tiny (2 layers, hidden 64,
# 4 query heads and 2 key/value heads of dimension 16, MLP width 96, vocabulary 100).
TINY = ModelConfig("tiny", 2, 64, 4, 2, 16, 96, 100, False, 2, "a small shape for counting")
