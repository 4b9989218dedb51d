"""Checking code that several pages of the models chapter share: ``models/counting.md``,
``models/index.md``, ``moe/index.md``, ``parallelism/expert.md``.

The chapter's checks: the registry against the outside world.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from atlas.labkit.models.counting import layer_types, params_active, params_total
from atlas.labkit.registry.models import MODELS
from atlas.labkit.registry.schema import Model, parse_count

ROLE = "check"


TOLERANCE = 0.03  # relative; or the rounding of the printed figure, whichever is larger


@dataclass(frozen=True)
class Agreement:
    name: str
    total: float
    total_reported: float
    active: float
    active_reported: float
    total_ok: bool
    active_ok: bool

    @property
    def ok(self) -> bool:
        return self.total_ok and self.active_ok


def _excluded(m: Model, which: str) -> int:
    table = m.vocab * m.hidden
    if which == "input":
        return table
    if which == "both":
        return table if m.tied_embeddings else 2 * table
    return 0


def _within(derived: float, printed: str) -> tuple[float, bool]:
    value, half_unit = parse_count(printed)
    return value, abs(derived - value) <= max(TOLERANCE * value, half_unit)


def agreement(m: Model) -> Agreement | None:
    """Derived total and active counts against the report's, compared like with like."""
    r = m.reported
    if r is None:
        return None
    total = params_total(m) - _excluded(m, r.total_excludes)
    active = params_active(m) - _excluded(m, r.active_excludes)
    t_rep, t_ok = _within(total, r.total)
    a_rep, a_ok = _within(active, r.active)
    return Agreement(m.name, total, t_rep, active, a_rep, t_ok, a_ok)


def agreement_table(names: list[str] | None = None) -> str:
    rows = [f"{'model':<20}{'total':>10}{'report':>9}{'active':>9}{'report':>9}  ok"]
    for name in names or list(MODELS):
        a = agreement(MODELS[name])
        if a is None:
            rows.append(f"{name:<20}{'(no published count)':>37}")
            continue
        rows.append(
            f"{name:<20}{a.total / 1e9:>9.1f}B{a.total_reported / 1e9:>8.1f}B"
            f"{a.active / 1e9:>8.2f}B{a.active_reported / 1e9:>8.2f}B  {a.ok}"
        )
    return "\n".join(rows)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, device=None):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, device=device))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class LayerNorm(nn.LayerNorm):
    pass


def _linear(i: int, o: int, bias: bool, device) -> nn.Linear:
    return nn.Linear(i, o, bias=bias, device=device)


class GQAAttention(nn.Module):
    """Separate q, k, v, o projections, optional output gate, QK norm, biases and sinks."""

    def __init__(self, m: Model, device=None):
        super().__init__()
        a, h = m.attention, m.hidden
        self.a = a
        q_out = a.q_heads * a.head_dim * (2 if a.output_gate else 1)
        self.q = _linear(h, q_out, a.qkv_bias, device)
        self.k = _linear(h, a.kv_heads * a.head_dim, a.qkv_bias, device)
        self.v = _linear(h, a.kv_heads * a.head_dim, a.qkv_bias, device)
        self.o = _linear(a.q_heads * a.head_dim, h, a.o_bias, device)
        if a.qk_norm:
            self.q_norm = RMSNorm(a.head_dim, device)
            self.k_norm = RMSNorm(a.head_dim, device)
        if a.sinks:
            self.sinks = nn.Parameter(torch.zeros(a.q_heads, device=device))

    def step(self, x: torch.Tensor, cache: dict, window: int) -> torch.Tensor:
        """One token ``x`` (hidden,) attends to its cache plus itself."""
        a = self.a
        q = self.q(x)
        gate = None
        if a.output_gate:
            q, gate = q.view(a.q_heads, 2 * a.head_dim).split(a.head_dim, dim=-1)
        q = q.reshape(a.q_heads, a.head_dim)
        k = self.k(x).view(a.kv_heads, 1, a.head_dim)
        v = self.v(x).view(a.kv_heads, 1, a.head_dim)
        if a.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        cache["k"] = k if "k" not in cache else torch.cat([cache["k"], k], dim=1)
        cache["v"] = v if "v" not in cache else torch.cat([cache["v"], v], dim=1)
        if window:
            cache["k"], cache["v"] = cache["k"][:, -window:], cache["v"][:, -window:]
        group = a.q_heads // a.kv_heads
        qg = q.view(a.kv_heads, group, a.head_dim)
        scores = torch.matmul(qg, cache["k"].transpose(1, 2)) / math.sqrt(a.head_dim)
        p = torch.softmax(scores, dim=-1)
        out = torch.matmul(p, cache["v"]).reshape(a.q_heads * a.head_dim)
        if gate is not None:
            out = out * torch.sigmoid(gate.reshape(-1))
        return self.o(out)


class MLAAttention(nn.Module):
    """DeepSeek-V3's multi-head latent attention, decoding in the absorbed form: the cache
    holds the normalised latent and the shared rope key; queries are moved into the latent
    space through the key half of ``kv_b`` and outputs out of it through the value half."""

    def __init__(self, m: Model, device=None):
        super().__init__()
        a, h = m.attention, m.hidden
        self.a = a
        qk = a.qk_nope_dim + a.qk_rope_dim
        self.q_a = _linear(h, a.q_lora_rank, False, device)
        self.q_a_norm = RMSNorm(a.q_lora_rank, device)
        self.q_b = _linear(a.q_lora_rank, a.q_heads * qk, False, device)
        self.kv_a = _linear(h, a.kv_lora_rank + a.qk_rope_dim, False, device)
        self.kv_norm = RMSNorm(a.kv_lora_rank, device)
        self.kv_b = _linear(
            a.kv_lora_rank, a.q_heads * (a.qk_nope_dim + a.v_head_dim), False, device
        )
        self.o = _linear(a.q_heads * a.v_head_dim, h, False, device)

    def step(self, x: torch.Tensor, cache: dict, window: int) -> torch.Tensor:
        a = self.a
        q = self.q_b(self.q_a_norm(self.q_a(x))).view(a.q_heads, -1)
        q_nope, q_rope = q.split([a.qk_nope_dim, a.qk_rope_dim], dim=-1)
        kv = self.kv_a(x)
        latent, k_rope = kv.split([a.kv_lora_rank, a.qk_rope_dim])
        latent = self.kv_norm(latent)[None]
        k_rope = k_rope[None]
        cache["latent"] = latent if "latent" not in cache else torch.cat([cache["latent"], latent])
        cache["rope"] = k_rope if "rope" not in cache else torch.cat([cache["rope"], k_rope])
        w = self.kv_b.weight.view(a.q_heads, a.qk_nope_dim + a.v_head_dim, a.kv_lora_rank)
        w_k, w_v = w[:, : a.qk_nope_dim], w[:, a.qk_nope_dim :]
        q_latent = torch.bmm(q_nope[:, None], w_k)[:, 0]  # (heads, kv_lora)
        scores = q_latent @ cache["latent"].T + q_rope @ cache["rope"].T
        p = torch.softmax(scores / math.sqrt(a.qk_nope_dim + a.qk_rope_dim), dim=-1)
        out_latent = p @ cache["latent"]  # (heads, kv_lora)
        out = torch.bmm(out_latent[:, None], w_v.transpose(1, 2))[:, 0]
        return self.o(out.reshape(-1))


class Expert(nn.Module):
    def __init__(self, h: int, width: int, bias: bool, device=None):
        super().__init__()
        self.gate = _linear(h, width, bias, device)
        self.up = _linear(h, width, bias, device)
        self.down = _linear(width, h, bias, device)

    def forward(self, x):
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


class MoE(nn.Module):
    def __init__(self, m: Model, device=None):
        super().__init__()
        mlp, h = m.mlp, m.hidden
        self.top_k = mlp.top_k
        self.router = _linear(h, mlp.experts, mlp.router_bias, device)
        self.experts = nn.ModuleList(
            Expert(h, mlp.expert_intermediate, mlp.expert_bias, device) for _ in range(mlp.experts)
        )
        self.shared = nn.ModuleList(
            Expert(h, mlp.shared_intermediate, mlp.expert_bias, device)
            for _ in range(mlp.shared_experts)
        )
        self.shared_gate = _linear(h, 1, False, device) if mlp.shared_gate else None

    def forward(self, x):
        weights, idx = torch.topk(torch.softmax(self.router(x), -1), self.top_k)
        out = sum(w * self.experts[int(i)](x) for w, i in zip(weights, idx, strict=True))
        for s in self.shared:
            y = s(x)
            out = out + (torch.sigmoid(self.shared_gate(x)) * y if self.shared_gate else y)
        return out


class Block(nn.Module):
    def __init__(self, m: Model, index: int, device=None):
        super().__init__()
        if layer_types(m)[index] == "linear":
            raise NotImplementedError("linear-attention layers are counted by formula only")
        self.attn = (MLAAttention if m.attention.kind == "MLA" else GQAAttention)(m, device)
        self.window = m.attention.window if layer_types(m)[index] == "sliding" else 0
        moe = m.mlp.is_moe and index >= m.mlp.dense_layers
        self.mlp = MoE(m, device) if moe else Expert(m.hidden, m.mlp.intermediate, False, device)
        self.norms = nn.ModuleList(RMSNorm(m.hidden, device) for _ in range(m.norms_per_layer))

    def step(self, x, cache):
        x = x + self.attn.step(self.norms[0](x), cache, self.window)
        return x + self.mlp(self.norms[1](x))


class Decoder(nn.Module):
    """A decoder built from a registry entry's shapes (text part only)."""

    def __init__(self, m: Model, device=None):
        super().__init__()
        self.embed = nn.Embedding(m.vocab, m.hidden, device=device)
        self.blocks = nn.ModuleList(Block(m, i, device) for i in range(m.layers))
        self.norm = RMSNorm(m.hidden, device)
        self.head = None if m.tied_embeddings else _linear(m.hidden, m.vocab, False, device)

    def step(self, token: int, caches: list[dict]) -> torch.Tensor:
        x = self.embed.weight[token]
        for block, cache in zip(self.blocks, caches, strict=True):
            x = block.step(x, cache)
        x = self.norm(x)
        return self.head(x) if self.head is not None else x @ self.embed.weight.T


def build(m: Model, device: str = "meta") -> Decoder:
    """The model's text decoder as real modules (on the meta device by default)."""
    return Decoder(m, device=torch.device(device))
