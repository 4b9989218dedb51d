"""Harness of the post-training chapter's labs: upstream code at the pins, fakes, toy models.

Nothing here is taught; the labs use it to check the taught modules against something
independent of them.

- :func:`upstream_defs` is :func:`atlas.labkit.pinned.definitions` with the decorators that
  need a GPU stack or a cluster (``@torch.compile``, ``@ray.remote``) dropped, so the plain
  Python body runs on a CPU; a lab whose upstream objects are absent is skipped.
- Loaders of the upstream functions the labs compare with (slime's rewards and losses, GAE,
  parameter gathering and conversion, its two training loops; checkpoint-engine's bucket
  planner; Megatron-LM's GRPO functions).
- A simulated clock and fake ``ray`` objects that run slime's loops without a cluster.
- Toy models, the chain environment's exact evaluation, and the checkers of each page.
"""

from __future__ import annotations

import functools
import logging
import math
import types
from typing import Any

import torch

from atlas.labkit.pinned import definitions, dropping
from atlas.labkit.pinned import read as _read

read_upstream = functools.partial(_read, with_path=True)

# Decorators that need a GPU stack or a cluster; others, such as ``dataclasses.dataclass``, stay.
upstream_defs = functools.partial(
    definitions, decorators=dropping("torch.compile", "ray.remote", "trace_function")
)


_QUIET = logging.getLogger("post_training_upstream")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


# ---------------------------------------------------------------------------------------------
# Upstream functions at the pins
# ---------------------------------------------------------------------------------------------

SLIME_PPO = "slime/utils/ppo_utils.py"
SLIME_LOSS = "slime/backends/megatron_utils/loss.py"
SLIME_CP = "slime/backends/megatron_utils/cp_utils.py"
MEGATRON_RL = "megatron/rl/rl_utils.py"


class _Mpu:
    """Megatron's ``parallel_state`` as seen by one rank without context parallelism."""

    @staticmethod
    def get_context_parallel_world_size() -> int:
        return 1

    @staticmethod
    def get_context_parallel_rank() -> int:
        return 0


@functools.cache
def slime_ppo() -> types.SimpleNamespace:
    """slime's KL estimators, clipped loss and GAE from ``ppo_utils.py`` at the pin (the
    ``@torch.compile`` decorators dropped)."""
    import torch.nn.functional as F

    names = (
        "compute_approx_kl",
        "compute_policy_loss",
        "compute_gspo_kl",
        "vanilla_gae",
        "chunked_discounted_returns",
        "chunked_gae",
    )
    scope = upstream_defs("slime", SLIME_PPO, names, {"torch": torch, "F": F})
    return types.SimpleNamespace(label=scope.label, **{n: scope[n] for n in names})


@functools.cache
def slime_loss() -> types.SimpleNamespace:
    """slime's TIS weighting (``loss.py``) and its per-sample reducer (``cp_utils.py``)."""
    from collections.abc import Callable

    loss = upstream_defs(
        "slime",
        SLIME_LOSS,
        ("vanilla_tis_function", "icepop_function"),
        {"torch": torch, "Any": Any},
    )
    cp = upstream_defs(
        "slime",
        SLIME_CP,
        ("get_sum_of_sample_mean",),
        {"torch": torch, "mpu": _Mpu, "Callable": Callable},
    )
    return types.SimpleNamespace(
        vanilla_tis_function=loss["vanilla_tis_function"],
        icepop_function=loss["icepop_function"],
        get_sum_of_sample_mean=cp["get_sum_of_sample_mean"],
        label=loss.label,
    )


class _Sample:
    def __init__(self, reward: float) -> None:
        self.reward = reward

    def get_reward_value(self, args) -> float:
        return self.reward


def slime_group_rewards(rewards: list[float], group_size: int, std: bool = True) -> list[float]:
    """The rewards slime hands to training for GRPO: ``RolloutManager._post_process_rewards``
    at the pin, run on plain samples."""
    scope = upstream_defs(
        "slime", "slime/ray/rollout.py", ("RolloutManager._post_process_rewards",), {"torch": torch}
    )
    fn = scope["_post_process_rewards"]
    args = types.SimpleNamespace(
        advantage_estimator="grpo",
        rewards_normalization=True,
        grpo_std_normalization=std,
        n_samples_per_prompt=group_size,
        rollout_batch_size=len(rewards) // group_size,
    )
    me = types.SimpleNamespace(custom_reward_post_process_func=None, args=args)
    _, normalized = fn(me, [_Sample(r) for r in rewards])
    return normalized


@functools.cache
def megatron_grpo() -> types.SimpleNamespace:
    """Megatron-LM's ``calculate_grpo_advantages`` and ``calculate_grpo_loss`` (``megatron/rl``)."""
    import numpy as np

    scope = upstream_defs(
        "megatron",
        MEGATRON_RL,
        ("calculate_grpo_advantages", "calculate_grpo_loss"),
        {
            "torch": torch,
            "np": np,
            "logging": logging,
            "logger": _QUIET,
            "log_single_rank": lambda *a, **k: None,
        },
    )
    return types.SimpleNamespace(
        advantages=scope["calculate_grpo_advantages"],
        loss=scope["calculate_grpo_loss"],
        label=scope.label,
    )


# ---------------------------------------------------------------------------------------------
# Checkers of the policy-gradient page
# ---------------------------------------------------------------------------------------------


def chain_expected_reward(logits: torch.Tensor, target: int) -> float:
    """The exact expected reward of the tabular policy of :mod:`.ppo`, by dynamic programming
    over the distribution of the previous token (no sampling): the mean over positions of the
    probability that the token there is ``target``."""
    horizon, states, vocab = logits.shape
    dist = torch.zeros(states, dtype=torch.float64)
    dist[vocab] = 1.0
    total = 0.0
    for t in range(horizon):
        nxt = dist @ torch.softmax(logits[t].to(torch.float64), dim=-1)
        total += nxt[target].item()
        dist = torch.zeros(states, dtype=torch.float64)
        dist[:vocab] = nxt
    return total / horizon


def lambda_return_advantages(
    rewards: torch.Tensor, values: torch.Tensor, gamma: float, lam: float
) -> torch.Tensor:
    """GAE from its definition as a sum, not a recursion: ``A_t = sum_l (gamma lam)^l
    delta_{t+l}`` over the rest of the trajectory."""
    T = rewards.shape[-1]
    nxt = torch.cat([values[..., 1:], torch.zeros_like(values[..., :1])], dim=-1)
    delta = rewards + gamma * nxt - values
    out = torch.zeros_like(rewards)
    for t in range(T):
        for k in range(T - t):
            out[..., t] += (gamma * lam) ** k * delta[..., t + k]
    return out


# ---------------------------------------------------------------------------------------------
# The index: FLOPs of a real forward, backward and decode, counted
# ---------------------------------------------------------------------------------------------


def toy_model_config():
    """A registry :class:`Model` for the toy decoder of :class:`ToyLM` (two layers, GQA)."""
    from atlas.labkit.registry.models import MLP, Attention, Model

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


# ---------------------------------------------------------------------------------------------
# The rollout-train page: slime's two loops, run on a simulated clock
# ---------------------------------------------------------------------------------------------


class _Future:
    def __init__(self, done_at: float, value: Any = None) -> None:
        self.done_at, self.value = done_at, value


class _Clock:
    """Simulated time, and ``ray`` as the loops use it: ``ray.get`` waits for a future."""

    def __init__(self) -> None:
        self.now = 0.0

    def get(self, x: Any) -> Any:
        if isinstance(x, list):
            return [self.get(item) for item in x]
        if isinstance(x, _Future):
            self.now = max(self.now, x.done_at)
            return x.value
        return x


class _Remote:
    def __init__(self, fn) -> None:
        self.remote = fn


class _FakeRollout:
    """The rollout manager: ``generate`` runs on its own engines for ``durations[i]`` and
    returns its batch tagged with the weight version the engines held when it started."""

    def __init__(self, clock: _Clock, durations: list[float]) -> None:
        self.clock, self.durations, self.version = clock, durations, 0

        def generate(i: int) -> _Future:
            return _Future(clock.now + durations[i], ("batch", i, self.version))

        def instant(*args: Any, **kwargs: Any) -> _Future:
            return _Future(clock.now)

        self.generate = _Remote(generate)
        for name in (
            "eval",
            "save",
            "offload",
            "onload_weights",
            "onload_kv",
            "dispose",
            "check_weights",
        ):
            setattr(self, name, _Remote(instant))


class _FakeActor:
    """The training group: ``async_train`` takes ``train`` seconds and records which weights
    made the batch and which the trainer held; ``update_weights`` takes ``sync`` seconds and
    hands the trainer's version to the engines."""

    def __init__(self, clock: _Clock, rollout: _FakeRollout, train: float, sync: float) -> None:
        self.clock, self.rollout, self.train, self.sync = clock, rollout, train, sync
        self.version, self.records, self.pushes = 0, [], []

    def async_train(self, rollout_id: int, data: Any, external_data: Any = None) -> list[_Future]:
        _, batch, made_by = data
        assert batch == rollout_id
        self.records.append((rollout_id, made_by, self.version))
        self.version += 1
        return [_Future(self.clock.now + self.train)]

    def update_weights(self) -> None:
        self.clock.now += self.sync
        self.rollout.version = self.version
        self.pushes.append(self.clock.now)

    def create(self, *args: Any, **kwargs: Any) -> None:
        return None

    save_model = clear_memory = create


def slime_loop(
    rollout: list[float], train: float, sync: float, mode: str
) -> list[tuple[int, float, int, int]]:
    """slime's ``train`` of ``train.py`` (``mode="sync"``) or ``train_async.py``
    (``"async"``) at the pin, run with fake actors on a simulated clock. Returns, per step,
    ``(index, time its weight push ended, version that made its batch, trainer version)``."""
    clock = _Clock()
    fake_rollout = _FakeRollout(clock, rollout)
    actor = _FakeActor(clock, fake_rollout, train, sync)
    args = types.SimpleNamespace(
        release_train=False,
        offload_rollout=False,
        offload_train=False,
        use_critic=False,
        check_weight_update_equal=False,
        num_rollout=len(rollout),
        eval_interval=None,
        start_rollout_id=0,
        save_interval=None,
        rollout_global_dataset=False,
        update_weights_interval=1,
        colocate=False,
        num_critic_only_steps=0,
    )
    misc = upstream_defs("slime", "slime/utils/misc.py", ("should_run_periodic_action",))
    namespace = {
        "ray": types.SimpleNamespace(get=clock.get),
        "configure_logger": lambda: None,
        "init_tracking": lambda args: None,
        "finish_tracking": lambda args: None,
        "create_placement_groups": lambda args: {"rollout": None, "actor": None},
        "create_rollout_manager": lambda args, pg: (fake_rollout, None),
        "create_training_models": lambda args, pgs, manager: (actor, None),
        "should_run_periodic_action": misc["should_run_periodic_action"],
    }
    path = "train.py" if mode == "sync" else "train_async.py"
    scope = upstream_defs("slime", path, ("train",), namespace)
    scope["train"](args)
    pushes = actor.pushes[1:]  # the first push is the initial one, before the loop
    return [(i, pushes[i], made_by, version) for (i, made_by, version) in actor.records]


def lognormal_lengths(
    n: int, median: float, sigma: float, cap: int, gen: torch.Generator
) -> torch.Tensor:
    """``n`` response lengths, log-normal around ``median`` and cut at ``cap`` tokens."""
    z = torch.randn(n, generator=gen, dtype=torch.float64)
    return torch.clamp(torch.exp(math.log(median) + sigma * z).round(), 1, cap)


# ---------------------------------------------------------------------------------------------
# The weight-update page: a Megatron TP layout built from dense weights, slime's gather
# ---------------------------------------------------------------------------------------------


def dense_hf_weights(s, ffn: int, layers: int = 2, seed: int = 0) -> dict[str, torch.Tensor]:
    """Random dense weights of a Llama-shaped stack in Hugging Face layout and names
    (``layers.{i}.q_proj.weight`` ...), the reference the resharded weights must equal."""
    g = torch.Generator().manual_seed(seed)
    q, kv = s.heads * s.head_dim, s.groups * s.head_dim
    shapes = {
        "q_proj.weight": (q, s.hidden),
        "k_proj.weight": (kv, s.hidden),
        "v_proj.weight": (kv, s.hidden),
        "o_proj.weight": (s.hidden, q),
        "gate_proj.weight": (ffn, s.hidden),
        "up_proj.weight": (ffn, s.hidden),
        "down_proj.weight": (s.hidden, ffn),
        "input_layernorm.weight": (s.hidden,),
        "post_attention_layernorm.weight": (s.hidden,),
    }
    return {
        f"layers.{i}.{k}": torch.randn(*shape, generator=g)
        for i in range(layers)
        for k, shape in shapes.items()
    }


def _tp_attrs(t: torch.Tensor, parallel: bool, dim: int) -> torch.Tensor:
    t = t.clone()
    t.tensor_model_parallel, t.partition_dim, t.partition_stride = parallel, dim, 1
    return t


def megatron_tp_shards(
    dense: dict[str, torch.Tensor], s, tp: int, rank: int
) -> dict[str, torch.Tensor]:
    """Rank ``rank``'s shards, in Megatron-LM's names and layout, of the dense weights: Q, K and
    V fused and grouped by query group, then cut by groups (column-parallel); gate and up fused
    as ``[gate_r; up_r]`` of this rank's rows; the output and down projections cut by input
    columns (row-parallel); norms whole on every rank. Built from the definitions, not from
    the code under test."""
    out: dict[str, torch.Tensor] = {}
    layers = sorted({k.rsplit(".", 2)[0] for k in dense})
    rep = s.heads // s.groups
    for layer in layers:
        w = {k.rsplit(".", 2)[1]: v for k, v in dense.items() if k.startswith(layer + ".")}
        q = w["q_proj"].view(s.groups, rep, s.head_dim, s.hidden)
        k = w["k_proj"].view(s.groups, 1, s.head_dim, s.hidden)
        v = w["v_proj"].view(s.groups, 1, s.head_dim, s.hidden)
        qkv = torch.cat([q, k, v], dim=1).reshape(-1, s.hidden)
        out[f"{layer}.linear_qkv.weight"] = _tp_attrs(qkv.chunk(tp, 0)[rank], True, 0)
        out[f"{layer}.linear_proj.weight"] = _tp_attrs(w["o_proj"].chunk(tp, 1)[rank], True, 1)
        fc1 = torch.cat([w["gate_proj"].chunk(tp, 0)[rank], w["up_proj"].chunk(tp, 0)[rank]])
        out[f"{layer}.linear_fc1.weight"] = _tp_attrs(fc1, True, 0)
        out[f"{layer}.linear_fc2.weight"] = _tp_attrs(w["down_proj"].chunk(tp, 1)[rank], True, 1)
        for norm in ("input_layernorm", "post_attention_layernorm"):
            out[f"{layer}.{norm}.weight"] = _tp_attrs(w[norm], False, -1)
    return out


_SLIME_NAMES = {
    "linear_qkv.weight": "self_attention.linear_qkv.weight",
    "linear_proj.weight": "self_attention.linear_proj.weight",
    "linear_fc1.weight": "mlp.linear_fc1.weight",
    "linear_fc2.weight": "mlp.linear_fc2.weight",
    "input_layernorm.weight": "self_attention.linear_qkv.layer_norm_weight",
    "post_attention_layernorm.weight": "mlp.linear_fc1.layer_norm_weight",
}


def slime_reshard(local: dict[str, torch.Tensor], s) -> dict[str, torch.Tensor]:
    """slime's path at the pin on this rank: ``all_gather_param`` (update_weight/common.py) on
    each shard, then ``convert_qwen2_to_hf`` (megatron_to_hf/qwen2.py) on the full tensor; the
    names mapped back to ours (``layers.{i}.q_proj.weight``) for comparison."""
    import re

    import torch.distributed as dist

    mpu = types.SimpleNamespace(
        get_tensor_model_parallel_world_size=dist.get_world_size,
        get_tensor_model_parallel_group=lambda: None,
    )
    gather = upstream_defs(
        "slime",
        "slime/backends/megatron_utils/update_weight/common.py",
        ("all_gather_param",),
        {"torch": torch, "dist": dist, "mpu": mpu},
    )["all_gather_param"]
    convert = upstream_defs(
        "slime",
        "slime/backends/megatron_utils/megatron_to_hf/qwen2.py",
        ("convert_qwen2_to_hf",),
        {"torch": torch, "re": re},
    )["convert_qwen2_to_hf"]
    args = types.SimpleNamespace(
        kv_channels=s.head_dim,
        hidden_size=s.hidden,
        num_attention_heads=s.heads,
        num_query_groups=s.groups,
    )
    back = {
        "self_attn.q_proj.weight": "q_proj.weight",
        "self_attn.k_proj.weight": "k_proj.weight",
        "self_attn.v_proj.weight": "v_proj.weight",
        "self_attn.o_proj.weight": "o_proj.weight",
        "mlp.gate_proj.weight": "gate_proj.weight",
        "mlp.up_proj.weight": "up_proj.weight",
        "mlp.down_proj.weight": "down_proj.weight",
        "input_layernorm.weight": "input_layernorm.weight",
        "post_attention_layernorm.weight": "post_attention_layernorm.weight",
    }
    out = {}
    for name, shard in local.items():
        layer, module, kind = name.rsplit(".", 2)
        i = layer.split(".")[1]
        slime_name = f"module.module.decoder.layers.{i}.{_SLIME_NAMES[module + '.' + kind]}"
        for hf_name, tensor in convert(args, slime_name, gather(slime_name, shard)):
            suffix = hf_name.split(f"model.layers.{i}.", 1)[1]
            out[f"layers.{i}.{back[suffix]}"] = tensor
    return out


def reshard_matches_dense(rank: int, world: int, s, ffn: int) -> dict[str, Any]:
    """On one of ``world`` gloo ranks: build this rank's Megatron shards of the dense weights,
    reshard them with :func:`~atlas.labkit.post_training.weights.reshard_to_hf` and with slime's
    code at the pin, and compare both with the dense weights, bit for bit."""
    from atlas.labkit.post_training.weights import reshard_to_hf

    dense = dense_hf_weights(s, ffn)
    local = megatron_tp_shards(dense, s, world, rank)
    ours = reshard_to_hf(local, s)
    theirs = slime_reshard(local, s)
    return {
        "local_elements": sum(t.numel() for t in local.values()),
        "dense_elements": sum(t.numel() for t in dense.values()),
        "ours_equal": ours.keys() == dense.keys()
        and all(torch.equal(ours[k], dense[k]) for k in dense),
        "slime_equal": theirs.keys() == dense.keys()
        and all(torch.equal(theirs[k], dense[k]) for k in dense),
    }


def model_tensors(m, dtype_bytes: int = 2) -> list[tuple[str, int]]:
    """The tensors of a registry model as a checkpoint lists them: name and bytes, in order
    (embedding, then per layer its attention, norms and MLP or experts, then the head)."""
    a, h = m.attention, m.hidden
    q, kv = a.q_heads * a.head_dim, a.kv_heads * a.head_dim
    out = [("embed_tokens", m.vocab * h)]
    for i in range(m.layers):
        p = f"layers.{i}."
        out += [
            (p + "q_proj", h * q),
            (p + "k_proj", h * kv),
            (p + "v_proj", h * kv),
            (p + "o_proj", q * h),
        ]
        out += [(p + "input_layernorm", h), (p + "post_attention_layernorm", h)]
        if a.qk_norm:
            out += [(p + "q_norm", a.head_dim), (p + "k_norm", a.head_dim)]
        if m.mlp.is_moe and i >= m.mlp.dense_layers:
            out.append((p + "router", m.mlp.experts * h))
            for e in range(m.mlp.experts):
                f = m.mlp.expert_intermediate
                out += [
                    (p + f"experts.{e}.gate", h * f),
                    (p + f"experts.{e}.up", h * f),
                    (p + f"experts.{e}.down", f * h),
                ]
        else:
            f = m.mlp.intermediate
            out += [(p + "gate_proj", h * f), (p + "up_proj", h * f), (p + "down_proj", f * h)]
    out.append(("norm", h))
    if not m.tied_embeddings:
        out.append(("lm_head", m.vocab * h))
    return [(name, n * dtype_bytes) for name, n in out]


class _H2DBucket:
    """Stand-in for checkpoint-engine's pydantic ``H2DBucket`` (same three fields)."""

    def __init__(self, size: int, ranges: list, items: list) -> None:
        self.size, self.ranges, self.items = size, ranges, items


def checkpoint_engine_buckets(
    tensors: list[tuple[str, int]], world: int, bucket_bytes: int
) -> list[tuple[int, list[str], int]]:
    """checkpoint-engine's ``_gen_h2d_buckets`` at the pin, for a checkpoint whose tensors are
    split over ``world`` owner ranks as its ``examples/update.py`` splits them (contiguous runs
    of ``ceil(n / world)`` tensors). Returns ``(owner, tensor names, bucket bytes)`` per bucket
    of the broadcast plan (``ranks=None``: every rank receives every bucket)."""
    from typing import NamedTuple

    align = upstream_defs(
        "checkpoint-engine",
        "checkpoint_engine/pin_memory.py",
        ("_align_size",),
        {"_ALIGN_SIZE": 256},
    )
    types_ = upstream_defs(
        "checkpoint-engine",
        "checkpoint_engine/data_types.py",
        ("BucketRange",),
        {"NamedTuple": NamedTuple},
    )
    ps = upstream_defs(
        "checkpoint-engine",
        "checkpoint_engine/ps.py",
        ("_gen_h2d_buckets",),
        {
            "H2DBucket": _H2DBucket,
            "BucketRange": types_["BucketRange"],
            "MemoryBufferMetaList": Any,
            "logger": _QUIET,
        },
    )
    per = (len(tensors) + world - 1) // world
    metas = {}
    for rank in range(world):
        mine = tensors[rank * per : (rank + 1) * per]
        if not mine:
            continue
        items = [
            types.SimpleNamespace(
                name=n, aligned_size=align["_align_size"](torch.uint8, torch.Size([b]))
            )
            for n, b in mine
        ]
        metas[rank] = types.SimpleNamespace(
            memory_buffer_metas_list=[types.SimpleNamespace(metas=items)]
        )
    plan = ps["_gen_h2d_buckets"](metas, bucket_bytes, {}, {}, None)
    return [(owner, [it.name for it in bucket.items], bucket.size) for owner, _, bucket in plan]


# ---------------------------------------------------------------------------------------------
# The agentic page: slime's trajectory builder at the pin
# ---------------------------------------------------------------------------------------------


@functools.cache
def _slime_trajectory() -> dict[str, Any]:
    import dataclasses
    import enum

    return upstream_defs(
        "slime",
        "slime/agent/trajectory.py",
        ("TurnRecord", "_common_prefix_len", "DriftKind", "_SampleBuilder"),
        {"dataclasses": dataclasses, "enum": enum, "Any": Any, "Sample": None},
    )


def slime_trajectory(
    turns: list[tuple[list[int], list[int], list[float]]],
) -> tuple[list[int], list[int], list[float]]:
    """slime's ``_SampleBuilder`` at the pin fed the same turns (prompt ids, output ids,
    output log-probs): the response region it would train on (tokens, loss mask, log-probs)."""
    t = _slime_trajectory()
    builder = t["_SampleBuilder"](fork_threshold=10**9)
    for prompt, output, logprobs in turns:
        turn = t["TurnRecord"](
            prompt_ids=prompt, output_ids=output, finish_reason="stop", output_log_probs=logprobs
        )
        kind = builder.classify_token_drift(turn)
        builder.append_turn(turn, kind)
    start = builder.leading_prompt_len
    return builder.tokens[start:], builder.loss_mask[start:], builder.logprobs[start:]


def slime_drift_kind(held_turns, prompt: list[int], output: list[int]) -> str:
    """How slime's builder classifies a turn whose prompt does not extend what it holds."""
    t = _slime_trajectory()
    builder = t["_SampleBuilder"](fork_threshold=64)
    for p, o, lp in held_turns:
        turn = t["TurnRecord"](
            prompt_ids=p, output_ids=o, finish_reason="stop", output_log_probs=lp
        )
        builder.append_turn(turn, builder.classify_token_drift(turn))
    turn = t["TurnRecord"](prompt_ids=prompt, output_ids=output, finish_reason="stop")
    return builder.classify_token_drift(turn).value


def scripted_episode(
    seed: int = 0, turns: int = 3
) -> list[tuple[list[int], list[int], list[float]]]:
    """A tool-using episode as the engine sees it: a first prompt, then per turn the model's
    output (ending in a tool call), the tool's result and the template tokens that open the
    next assistant turn appended to form the next prompt. Token ids are random."""
    g = torch.Generator().manual_seed(seed)

    def ids(n: int) -> list[int]:
        return torch.randint(100, 1000, (n,), generator=g).tolist()

    prompt = ids(12)
    out = []
    for _ in range(turns):
        output = ids(int(torch.randint(3, 9, (1,), generator=g)))
        logprobs = (-torch.rand(len(output), generator=g)).tolist()
        out.append((list(prompt), output, logprobs))
        prompt = prompt + output + ids(int(torch.randint(4, 10, (1,), generator=g)))
    return out


# ---------------------------------------------------------------------------------------------
# The SFT page: packed against separate sequences, gradient weights, slime's reducers
# ---------------------------------------------------------------------------------------------


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


def slime_placement(train_gpus: int, rollout_gpus: int, colocate: bool) -> int:
    """GPUs slime's ``_get_placement_group_layout`` (placement_group.py, at the pin) reserves
    for one node of ``train_gpus`` training GPUs and ``rollout_gpus`` engine GPUs."""
    fn = upstream_defs("slime", "slime/ray/placement_group.py", ("_get_placement_group_layout",))[
        "_get_placement_group_layout"
    ]
    args = types.SimpleNamespace(
        actor_num_nodes=1,
        actor_num_gpus_per_node=train_gpus,
        debug_train_only=False,
        rollout_external=False,
        debug_rollout_only=False,
        colocate=colocate,
        rollout_num_gpus=rollout_gpus,
    )
    return fn(args)[0]


def engine_layers_match_dense(rank: int, world: int, s, ffn: int) -> dict[str, bool]:
    """The whole path on ``world`` gloo ranks: Megatron TP shards of the dense weights,
    resharded to Hugging Face tensors by :func:`~.weights.reshard_to_hf`, then loaded into
    nano-vllm's own tensor-parallel layers (``nanovllm/layers/linear.py`` at the pin, run on
    this process group) through their ``weight_loader``s. Each layer's output on this rank
    must equal the matching slice of the dense layer's output (the row-parallel layers
    all-reduce, so theirs must equal the whole)."""
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn

    from atlas.labkit.post_training.weights import reshard_to_hf

    nv = upstream_defs(
        "nano-vllm",
        "nanovllm/layers/linear.py",
        (
            "divide",
            "LinearBase",
            "ColumnParallelLinear",
            "MergedColumnParallelLinear",
            "QKVParallelLinear",
            "RowParallelLinear",
        ),
        {"torch": torch, "nn": nn, "F": F, "dist": dist},
    )
    dense = dense_hf_weights(s, ffn)
    hf = reshard_to_hf(megatron_tp_shards(dense, s, world, rank), s)
    qkv = nv["QKVParallelLinear"](s.hidden, s.head_dim, s.heads, s.groups)
    o = nv["RowParallelLinear"](s.heads * s.head_dim, s.hidden)
    gate_up = nv["MergedColumnParallelLinear"](s.hidden, [ffn, ffn])
    down = nv["RowParallelLinear"](ffn, s.hidden)
    p = "layers.0."
    for shard, layer in (("q", qkv), ("k", qkv), ("v", qkv)):
        layer.weight.weight_loader(layer.weight, hf[p + f"{shard}_proj.weight"], shard)
    gate_up.weight.weight_loader(gate_up.weight, hf[p + "gate_proj.weight"], 0)
    gate_up.weight.weight_loader(gate_up.weight, hf[p + "up_proj.weight"], 1)
    o.weight.weight_loader(o.weight, hf[p + "o_proj.weight"])
    down.weight.weight_loader(down.weight, hf[p + "down_proj.weight"])

    g = torch.Generator().manual_seed(1)
    x = torch.randn(5, s.hidden, generator=g)
    q_cols, kv_cols = s.heads * s.head_dim // world, s.groups * s.head_dim // world
    mine = lambda w, n: w[rank * n : (rank + 1) * n]  # noqa: E731 - this rank's rows
    want_qkv = torch.cat(
        [
            x @ mine(dense[p + f"{n}_proj.weight"], c).T
            for n, c in (("q", q_cols), ("k", kv_cols), ("v", kv_cols))
        ],
        -1,
    )
    want_gate_up = torch.cat(
        [x @ mine(dense[p + f"{n}_proj.weight"], ffn // world).T for n in ("gate", "up")], -1
    )
    a = torch.randn(5, s.heads * s.head_dim, generator=g)
    h = torch.randn(5, ffn, generator=g)
    a_mine = a[:, rank * q_cols : (rank + 1) * q_cols]
    h_mine = h[:, rank * ffn // world : (rank + 1) * ffn // world]
    with torch.no_grad():
        return {
            "qkv": torch.allclose(qkv(x), want_qkv, atol=1e-5),
            "gate_up": torch.allclose(gate_up(x), want_gate_up, atol=1e-5),
            "o": torch.allclose(o(a_mine), a @ dense[p + "o_proj.weight"].T, atol=1e-5),
            "down": torch.allclose(down(h_mine), h @ dense[p + "down_proj.weight"].T, atol=1e-5),
        }


# ---------------------------------------------------------------------------------------------
# Problems
# ---------------------------------------------------------------------------------------------


@functools.cache
def _slime_filter():
    scope = upstream_defs(
        "slime",
        "slime/rollout/filter_hub/dynamic_sampling_filters.py",
        ("check_reward_nonzero_std",),
        {
            "torch": torch,
            "DynamicFilterOutput": lambda keep, reason=None: types.SimpleNamespace(keep=keep),
        },
    )
    return scope["check_reward_nonzero_std"]


def slime_keeps_group(rewards: list[float]) -> bool:
    """slime's DAPO filter ``check_reward_nonzero_std`` (dynamic_sampling_filters.py, at the
    pin) on a group with these rewards: kept unless all rewards are equal."""
    return bool(_slime_filter()(None, [_Sample(r) for r in rewards]).keep)
