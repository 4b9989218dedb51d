"""The FLOPs of one training iteration, and model FLOPs utilisation (MFU).

A matrix multiplication of an ``m x k`` by a ``k x n`` matrix costs ``2 m k n`` FLOPs, and
training runs each of a layer's multiplications three times: once forward, twice backward
(the gradient with respect to the input and the one with respect to the weight). So every
weight of a matrix costs ``6`` FLOPs per token, and attention adds the score and weighted-sum
products, which grow with the sequence. These are the *model* FLOPs: recomputation is not
counted, since it does not advance training; MFU divides them by what the hardware could do.

:func:`training_flops` counts a dense decoder with grouped-query attention and a gated MLP
(the Llama shape) the way Megatron-LM's ``num_floating_point_operations`` does: causal
attention costs half of the full ``s x s`` products, norms and the embedding lookup are
free, the output head is a matrix like any other.
"""

from __future__ import annotations

from atlas.labkit.models.counting import params_active
from atlas.labkit.registry.schema import Model

ROLE = "taught"


def training_flops(m: Model, seq: int, batch: int) -> dict[str, float]:
    """FLOPs of one iteration of ``batch`` sequences of ``seq`` tokens, by part.

    Per token and layer, forward: ``2 h (q + 2 kv) + 2 q h`` for the projections
    (``q = heads * head_dim``, ``kv = kv_heads * head_dim``), ``2 * 3 h f`` for the gated MLP
    of width ``f``, and ``2 * 2 * (s / 2) * q`` for the causal scores and weighted sum. The
    output head adds ``2 h V`` per token. Training is three times the forward.
    """
    a = m.attention
    if a.kind not in ("MHA", "GQA", "MQA") or m.mlp.is_moe:
        raise ValueError(f"{m.name}: training_flops counts dense models with MHA/GQA/MQA")
    h, q, kv, f = m.hidden, a.q_heads * a.head_dim, a.kv_heads * a.head_dim, m.mlp.intermediate
    tokens = seq * batch
    projections = 2 * h * (q + 2 * kv) + 2 * q * h
    mlp = 2 * 3 * h * f
    attention = 2 * 2 * (seq / 2) * q
    out = {
        "gemm": 3.0 * tokens * m.layers * (projections + mlp),
        "attention": 3.0 * tokens * m.layers * attention,
        "logits": 3.0 * tokens * 2 * h * m.vocab,
    }
    out["total"] = sum(out.values())
    return out


def six_n_flops(m: Model, tokens: float) -> float:
    """The rule of thumb: ``6 N`` FLOPs per token, ``N`` the parameters a token uses (the input
    embedding lookup excluded, as it multiplies nothing)."""
    lookup = m.vocab * m.hidden
    return 6.0 * (params_active(m) - lookup) * tokens


def mfu(flops_per_token: float, tokens_per_second: float, chips: int, peak_flops: float) -> float:
    """Model FLOPs utilisation: achieved model FLOP/s over the chips' peak FLOP/s."""
    return flops_per_token * tokens_per_second / (chips * peak_flops)
