"""Checks for the "Frontier open models" chapter: the registry against the outside world.

Three independent references for the counting functions of ``atlas.labkit.registry.models``:

- the parameter counts the reports publish (:func:`agreement`);
- real ``torch.nn`` modules built from a model's shapes, whose tensors are counted
  (:func:`build`, on the meta device, costs no memory even for a trillion parameters);
- a real forward pass of a scaled-down model under ``torch.utils.flop_counter.FlopCounterMode``
  (FLOPs), with a real KV cache whose tensors are measured (bytes) (:func:`run_tokens`).

The module built here follows each family's published layer structure (fused or separate
projections do not change the count), and the forward pass runs attention one query at a time
over its cached keys, so the FLOPs counted are exactly the causal ones.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from atlas.labkit.pinned import module, read
from atlas.labkit.registry.models import (
    MODELS,
    Model,
    kv_bytes,
    kv_bytes_per_token,
    layer_types,
    params_active,
    params_total,
    parse_count,
    vision_params,
)

GIB = 2**30
TOLERANCE = 0.03  # relative; or the rounding of the printed figure, whichever is larger

# ---------------------------------------------------------------------------------------------
# Published counts
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# The frontier table
# ---------------------------------------------------------------------------------------------


def _attention_label(m: Model) -> str:
    a = m.attention
    kinds = layer_types(m)
    if a.kind == "MLA":
        return f"MLA {a.q_heads}h, latent {a.kv_lora_rank}+{a.qk_rope_dim}"
    base = f"{a.q_heads}q/{a.kv_heads}kv x{a.head_dim}"
    if "linear" not in kinds:
        base = f"{a.kind} {base}"
    if "linear" in kinds:
        n_full = kinds.count("full")
        return f"hybrid {n_full}/{len(kinds)} full, {base}"
    if "sliding" in kinds:
        n_full = kinds.count("full")
        return f"{base}, {n_full}/{len(kinds)} full, w={a.window}"
    return base


def _mlp_label(m: Model) -> str:
    mlp = m.mlp
    if not mlp.is_moe:
        return f"dense {mlp.intermediate}"
    shared = f"+{mlp.shared_experts}" if mlp.shared_experts else ""
    return f"{mlp.top_k}{shared}/{mlp.experts} x{mlp.expert_intermediate}"


def frontier_rows() -> list[dict]:
    rows = []
    for m in MODELS.values():
        rows.append(
            {
                "model": m.name,
                "attention": _attention_label(m),
                "mlp": _mlp_label(m),
                "context_k": m.context // 1024,
                "total_b": params_total(m) / 1e9,
                "active_b": params_active(m) / 1e9,
                "kv_kib": kv_bytes_per_token(m, "bf16") / 1024,
                "kv32k_gib": kv_bytes(m, 32768, "bf16") / GIB,
                "kv128k_gib": kv_bytes(m, 131072, "bf16") / GIB,
                "vision_m": vision_params(m.vision, m.hidden) / 1e6,
            }
        )
    return rows


def frontier_table() -> str:
    head = (
        f"{'model':<19}{'attention':<38}{'MLP / MoE':<18}{'ctx':>4}{'total':>8}"
        f"{'active':>8}{'KV/tok':>8}{'@32k':>7}{'@128k':>7}"
    )
    units = f"{'':<19}{'':<38}{'':<18}{'k':>4}{'B':>8}{'B':>8}{'KiB':>8}{'GiB':>7}{'GiB':>7}"
    lines = [head, units]
    for r in frontier_rows():
        lines.append(
            f"{r['model']:<19}{r['attention']:<38}{r['mlp']:<18}{r['context_k']:>4}"
            f"{r['total_b']:>8.1f}{r['active_b']:>8.1f}{r['kv_kib']:>8.1f}"
            f"{r['kv32k_gib']:>7.2f}{r['kv128k_gib']:>7.2f}"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Real modules built from the shapes
# ---------------------------------------------------------------------------------------------


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
        self.kv_b = _linear(a.kv_lora_rank, a.q_heads * (a.qk_nope_dim + a.v_head_dim), False,
                            device)
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


def count_tensors(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def count_by_building(m: Model) -> int:
    """Parameters of ``m``'s text decoder counted on real modules (meta device): the
    embedding, head and final norm, plus one built layer of each distinct kind (attention
    kind, dense or MoE) times the number of layers of that kind."""
    device = torch.device("meta")
    total = count_tensors(nn.Embedding(m.vocab, m.hidden, device=device))
    total += count_tensors(RMSNorm(m.hidden, device))
    if not m.tied_embeddings:
        total += count_tensors(_linear(m.hidden, m.vocab, False, device))
    signatures: dict[tuple, list[int]] = {}
    for i, kind in enumerate(layer_types(m)):
        moe = m.mlp.is_moe and i >= m.mlp.dense_layers
        signatures.setdefault((kind, moe), []).append(i)
    for layers in signatures.values():
        total += len(layers) * count_tensors(Block(m, layers[0], device))
    return total


def scaled_down(name: str, **changes) -> Model:
    """A small model of the same family: same structure, small dimensions."""
    m = MODELS[name]
    a = m.attention
    layers = changes.pop("layers", 4)
    kinds = a.layer_types[:layers] if a.layer_types else ()
    attn = dataclasses.replace(
        a,
        q_heads=8,
        kv_heads=8 if a.kind in ("MHA", "MLA") else 2,
        head_dim=8,
        layer_types=kinds,
        window=4 if a.window else 0,
        q_lora_rank=12 if a.q_lora_rank else 0,
        kv_lora_rank=16 if a.kv_lora_rank else 0,
        qk_nope_dim=8 if a.kv_lora_rank else 0,
        qk_rope_dim=4 if a.kv_lora_rank else 0,
        v_head_dim=8 if a.kv_lora_rank else 0,
    )
    mlp = dataclasses.replace(
        m.mlp,
        intermediate=48 if m.mlp.intermediate else 0,
        experts=8 if m.mlp.experts else 0,
        top_k=2 if m.mlp.experts else 0,
        expert_intermediate=16 if m.mlp.experts else 0,
        shared_intermediate=16 if m.mlp.shared_experts else 0,
        dense_layers=min(m.mlp.dense_layers, 1),
    )
    return dataclasses.replace(
        m, name=f"{name} (scaled)", layers=layers, hidden=32, vocab=97, attention=attn, mlp=mlp,
        vision=None, **changes,
    )


@dataclass(frozen=True)
class Run:
    flops: list[int]  # FLOPs counted for each token's forward
    cache_bytes: int  # bytes held by the KV cache after the last token


def run_tokens(m: Model, n_tokens: int, seed: int = 0) -> Run:
    """Feed ``n_tokens`` tokens one at a time through a real scaled model; count each step's
    FLOPs with ``FlopCounterMode`` and measure the cache tensors at the end."""
    torch.manual_seed(seed)
    decoder = Decoder(m).requires_grad_(False)
    caches: list[dict] = [{} for _ in range(m.layers)]
    flops = []
    for t in range(n_tokens):
        counter = FlopCounterMode(display=False)
        with counter:
            decoder.step(t % m.vocab, caches)
        flops.append(counter.get_total_flops())
    nbytes = sum(t.numel() * 2 for c in caches for t in c.values())  # as if stored in bf16
    return Run(flops=flops, cache_bytes=nbytes)


# ---------------------------------------------------------------------------------------------
# Megatron-LM's own parameter count, read at the pin
# ---------------------------------------------------------------------------------------------




MEGATRON_FILE = "megatron/training/theoretical_memory_usage.py"


def megatron_arguments(m: Model) -> SimpleNamespace:
    """The Megatron-LM arguments that describe ``m`` (as slime's model scripts pass them)."""
    a, mlp = m.attention, m.mlp
    moe = mlp.is_moe
    return SimpleNamespace(
        num_layers=m.layers,
        hidden_size=m.hidden,
        num_attention_heads=a.q_heads,
        kv_channels=a.head_dim if a.kind != "MLA" else a.qk_nope_dim,
        group_query_attention=a.kind != "MLA" and a.kv_heads != a.q_heads,
        num_query_groups=a.kv_heads,
        multi_latent_attention=a.kind == "MLA",
        q_lora_rank=a.q_lora_rank or None,
        kv_lora_rank=a.kv_lora_rank,
        qk_head_dim=a.qk_nope_dim,
        qk_pos_emb_head_dim=a.qk_rope_dim,
        v_head_dim=a.v_head_dim,
        ffn_hidden_size=mlp.intermediate,
        swiglu=True,
        num_experts=mlp.experts if moe else None,
        moe_layer_freq=[0] * mlp.dense_layers + [1] * (m.layers - mlp.dense_layers),
        moe_ffn_hidden_size=mlp.expert_intermediate,
        moe_router_topk=mlp.top_k,
        moe_shared_expert_intermediate_size=(
            mlp.shared_intermediate * mlp.shared_experts if mlp.shared_experts else None
        ),
        mtp_num_layers=None,
        normalization="RMSNorm",
        padded_vocab_size=m.vocab,
        untie_embeddings_and_output_weights=not m.tied_embeddings,
        add_bias_linear=False,
        # parallel layout: one rank, no distributed optimizer
        world_size=1,
        data_parallel_size=1,
        tensor_model_parallel_size=1,
        pipeline_model_parallel_size=1,
        expert_tensor_parallel_size=1,
        expert_model_parallel_size=1,
        use_distributed_optimizer=False,
    )


def megatron_counts(m: Model) -> dict[str, float]:
    """Run ``compute_weight_and_optimizer_memory`` from Megatron-LM at the pin on ``m``'s
    arguments and read back the totals it prints (in billions, two decimals)."""
    namespace = {"print_rank_0": print, "is_hybrid_model": lambda args: False}
    megatron = module(  # its one relative import is the two helpers supplied here
        "megatron",
        MEGATRON_FILE,
        namespace=namespace,
        edit=lambda text: text.replace("from .utils import is_hybrid_model, print_rank_0", ""),
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        megatron.compute_weight_and_optimizer_memory(megatron_arguments(m), verbose=True)
    found = {}
    for line in out.getvalue().splitlines():
        if line.startswith("Total number of parameters in billions:"):
            found["total_b"] = float(line.rsplit(":", 1)[1])
        if line.startswith("Total number of active parameters in billions:"):
            found["active_b"] = float(line.rsplit(":", 1)[1])
    return found


# ---------------------------------------------------------------------------------------------
# The registry against slime's model scripts at the pin
# ---------------------------------------------------------------------------------------------

SLIME_SCRIPTS = {
    "llama-3.1-8b": "scripts/models/llama3.1-8B-Instruct.sh",
    "qwen3-0.6b": "scripts/models/qwen3-0.6B.sh",
    "qwen3-8b": "scripts/models/qwen3-8B.sh",
    "qwen3-32b": "scripts/models/qwen3-32B.sh",
    "qwen3-235b-a22b": "scripts/models/qwen3-235B-A22B.sh",
    "qwen3-next-80b-a3b": "scripts/models/qwen3-next-80B-A3B.sh",
    "deepseek-v3": "scripts/models/deepseek-v3.sh",
    "kimi-k2": "scripts/models/kimi-k2.sh",
    "glm-4.5": "scripts/models/glm4.5-355B-A32B.sh",
}


def slime_arguments(path: str) -> dict[str, str]:
    """``--flag value`` pairs of a slime model script read at the pin (flags without a value
    map to ``""``); shell variables for the layer count are resolved."""
    import re

    text, _ = read("slime", path)
    variables = {}
    for name, value in re.findall(r"^(\w+)=(\S+)", text, re.M):
        default = re.search(r":-(\d+)\}", value)
        variables[name] = int(default.group(1)) if default else value.strip('"')
    args: dict[str, str] = {}
    tokens = [t for line in text.splitlines() for t in line.split("#")[0].split()]
    for i, token in enumerate(tokens):
        if token.startswith("--"):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            args[token[2:]] = "" if nxt.startswith("--") or nxt == ")" else nxt.strip('"')
    layers = args.get("num-layers", "")
    if layers.startswith("$(("):
        expression = re.search(r"--num-layers\s+\$\(\((.*?)\)\)", text).group(1)
        names = re.findall(r"[A-Z_]+", expression)
        args["num-layers"] = str(sum(int(variables[n]) for n in names))
    elif layers.startswith("$"):
        args["num-layers"] = str(variables[layers.strip("${}")])
    for name in ("FIRST_K_DENSE_REPLACE", "N_DENSE_LAYERS"):
        if name in variables:
            args["dense-layers"] = str(variables[name])
    return args


def registry_vs_slime(name: str) -> dict[str, tuple]:
    """Fields where the registry and slime's script disagree: ``{flag: (registry, slime)}``."""
    m = MODELS[name]
    a, mlp = m.attention, m.mlp
    args = slime_arguments(SLIME_SCRIPTS[name])
    expect = {
        "num-layers": m.layers,
        "hidden-size": m.hidden,
        "num-attention-heads": a.q_heads,
        "vocab-size": m.vocab,
    }
    if a.kind == "MLA":
        expect.update({
            "q-lora-rank": a.q_lora_rank, "kv-lora-rank": a.kv_lora_rank,
            "qk-head-dim": a.qk_nope_dim, "qk-pos-emb-head-dim": a.qk_rope_dim,
            "v-head-dim": a.v_head_dim,
        })
    else:
        expect.update({"num-query-groups": a.kv_heads, "kv-channels": a.head_dim})
    if not mlp.is_moe or mlp.dense_layers:
        expect["ffn-hidden-size"] = mlp.intermediate
    if mlp.is_moe:
        expect.update({
            "num-experts": mlp.experts, "moe-router-topk": mlp.top_k,
            "moe-ffn-hidden-size": mlp.expert_intermediate, "dense-layers": mlp.dense_layers,
        })
        if mlp.shared_experts:
            expect["moe-shared-expert-intermediate-size"] = mlp.shared_intermediate
    untied = "untie-embeddings-and-output-weights" in args
    out = {k: (v, args.get(k)) for k, v in expect.items() if str(v) != args.get(k)}
    if untied == m.tied_embeddings:
        out["tied"] = (m.tied_embeddings, not untied)
    return out
