"""The shape of a model's figures: what the registry records for a released checkpoint.

Each :class:`Model` holds the figures of one released checkpoint: depth and width, the form of
attention, the MLP or mixture of experts, the vocabulary, the context length, the positional
scheme and any vision encoder. Each figure names its source in ``Model.sources``: a
configuration file read at a commit (a GitHub permalink) or a technical report through its
bibliography key (``cite:KEY``) and the table or section it comes from. The published totals
each report states are kept apart in ``Model.reported`` so a check can hold the counting
(:mod:`atlas.labkit.models.counting`) against them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROLE = "support"


# Pinned or snapshotted commits of the repositories the figures were read from.
SLIME = "https://github.com/THUDM/slime/blob/41014d1f29e201137fdffce737bb8bac65bc5219"
DEEPSEEK_V3 = (
    "https://github.com/deepseek-ai/DeepSeek-V3/blob/9b4e9788e4a3a731f7567338ed15d3ec549ce03b"
)
GPT_OSS = "https://github.com/openai/gpt-oss/blob/7b583341fe16729127f6d5b94a7b09ccae97e1a1"
GEMMA = "https://github.com/google-deepmind/gemma/blob/7691fd4e7f26c9ec5db38110dddb3addfab4d767"
TRANSFORMERS = (
    "https://github.com/huggingface/transformers/blob/008e574391258935f3ecc3035c882e73bbcac419"
)
QWEN25_VL = "https://github.com/QwenLM/Qwen2.5-VL/blob/f0af2996e843cf46aa5f778c38d6694500c2ca81"


@dataclass(frozen=True)
class Source:
    """Where a group of figures was read: ``ref`` is a permalink or ``cite:KEY``; ``where``
    names the table, section or lines; ``covers`` lists the :class:`Model` fields it backs."""

    ref: str
    where: str
    covers: tuple[str, ...]


@dataclass(frozen=True)
class Attention:
    """The attention of the softmax layers.

    ``kind`` is MHA, GQA, MQA, MLA or hybrid (softmax layers interleaved with linear ones).
    ``layer_types`` gives each layer's kind: ``"full"``, ``"sliding"`` (a window of
    ``window`` keys) or ``"linear"``; empty means every layer is full.
    For MLA, queries and keys have ``qk_nope_dim + qk_rope_dim`` per head and values
    ``v_head_dim``; the cache holds the ``kv_lora_rank`` latent and one shared rope key.
    """

    kind: str
    q_heads: int
    kv_heads: int
    head_dim: int
    layer_types: tuple[str, ...] = ()
    window: int = 0
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    output_gate: bool = False  # a sigmoid gate on the attention output (q_proj is doubled)
    sinks: bool = False  # one learned logit per head that absorbs attention mass
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_dim: int = 0
    qk_rope_dim: int = 0
    v_head_dim: int = 0


@dataclass(frozen=True)
class LinearAttention:
    """The linear layers of a hybrid: the layers that keep a fixed-size state, not a KV cache.

    ``kind`` is ``"Gated DeltaNet"`` (Qwen3-Next), ``"KDA"`` (Kimi Delta Attention, Kimi
    Linear), ``"lightning"`` (MiniMax-01's lightning attention) or ``"Mamba"`` (Jamba).
    The attention-like kinds carry a state of ``value_heads x key_head_dim x value_head_dim``
    per sequence, plus, when ``conv_kernel`` is not 0, a short causal convolution over
    ``conv_kernel`` steps of the projected q, k and v. A Mamba layer carries instead a state
    of ``inner x state_dim`` (``inner`` channels, each with ``state_dim`` numbers), a
    convolution over ``conv_kernel`` steps of its ``inner`` channels, and a step-size
    projection of rank ``dt_rank``; its head fields are 0.
    """

    kind: str
    key_heads: int
    value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int
    inner: int = 0
    state_dim: int = 0
    dt_rank: int = 0


@dataclass(frozen=True)
class MLP:
    """A gated MLP (SwiGLU or GeGLU: three matrices), dense or a mixture of experts.

    Dense layers use ``intermediate``. MoE layers hold ``experts`` routed experts of width
    ``expert_intermediate``, of which ``top_k`` run per token, plus ``shared_experts`` that
    always run (width ``shared_intermediate``). The first ``dense_layers`` layers are dense;
    past them, layer ``i`` is MoE when ``i % moe_period == moe_offset`` (every layer by
    default; Jamba: every other layer, ``moe_period=2, moe_offset=1``).
    """

    intermediate: int = 0
    experts: int = 0
    top_k: int = 0
    expert_intermediate: int = 0
    shared_experts: int = 0
    shared_intermediate: int = 0
    dense_layers: int = 0
    expert_bias: bool = False  # biases on the expert projections (gpt-oss)
    router_bias: bool = False  # per-expert router bias (gpt-oss; DeepSeek's balancing bias)
    shared_gate: bool = False  # a sigmoid gate on the shared expert's output (Qwen3-Next)
    moe_period: int = 1
    moe_offset: int = 0

    @property
    def is_moe(self) -> bool:
        return self.experts > 0


@dataclass(frozen=True)
class Vision:
    """A ViT image encoder and the connector that hands its output to the language model.

    ``layers`` blocks of width ``width`` with ``heads`` heads and an MLP of width ``mlp``
    (gated, three matrices, when ``gated_mlp``); square patches of ``patch`` pixels (and
    ``temporal_patch`` frames for video); learned position embeddings over an ``image``-pixel
    square when ``learned_positions``. ``norm`` is ``"layernorm"`` (weight and bias) or
    ``"rmsnorm"`` (weight). The connector is ``"linear"`` (a norm, then one matrix to the LM
    width) or ``"mlp"`` (``merge x merge`` neighbouring patches concatenated, a norm, then two
    matrices with biases). ``tokens`` is the number of LM tokens per image where it is fixed
    (0 when it follows the image's resolution).
    """

    name: str
    layers: int
    width: int
    heads: int
    mlp: int
    patch: int
    image: int = 0
    tokens: int = 0
    merge: int = 1
    temporal_patch: int = 1
    gated_mlp: bool = False
    learned_positions: bool = True
    norm: str = "layernorm"
    connector: str = "linear"


@dataclass(frozen=True)
class Reported:
    """A published parameter count, written as the report prints it (``"671B"``, ``"1.04T"``),
    and what it leaves out.

    ``active_excludes`` names the embedding tables the report leaves out of its active count
    (``"input"``: the lookup table; ``"both"``: lookup and output head), so the check compares
    like with like. ``total_excludes`` likewise. :func:`parse_count` turns the printed figure
    into a number and the half-unit of its last digit (its rounding).
    """

    total: str
    active: str
    ref: str
    where: str
    total_excludes: str = ""
    active_excludes: str = ""


_SCALE = {"M": 1e6, "B": 1e9, "T": 1e12}


def parse_count(text: str) -> tuple[float, float]:
    """``"116.83B"`` -> ``(116.83e9, 0.005e9)``: the value and half a unit of its last digit."""
    number, suffix = text[:-1], text[-1]
    scale = _SCALE[suffix]
    decimals = len(number.split(".")[1]) if "." in number else 0
    return float(number) * scale, 0.5 * 10.0**-decimals * scale


@dataclass(frozen=True)
class Model:
    """One released model. ``sources`` back every other field (see :func:`source_of`)."""

    name: str
    family: str
    layers: int
    hidden: int
    vocab: int
    attention: Attention
    mlp: MLP
    tied_embeddings: bool
    context: int
    position: str
    norms_per_layer: int = 2
    linear: LinearAttention | None = None
    vision: Vision | None = None
    mtp_layers: int = 0  # multi-token-prediction modules shipped with the weights, not counted
    reported: Reported | None = None
    sources: tuple[Source, ...] = field(default=(), repr=False)
    notes: str = ""


FIELDS = (
    "layers",
    "hidden",
    "vocab",
    "attention",
    "mlp",
    "tied_embeddings",
    "context",
    "position",
    "linear",
    "vision",
)


def source_of(m: Model, name: str) -> Source:
    """The source that backs field ``name`` of ``m``."""
    for s in m.sources:
        if name in s.covers:
            return s
    if getattr(m, name, None) is None:
        raise KeyError(f"{m.name} has no {name}")
    raise KeyError(f"{m.name}: no source covers {name!r}")


def _every(n: int, period: int, kind: str, other: str) -> tuple[str, ...]:
    """Layer kinds where every ``period``-th layer (the last of each group) is ``kind``."""
    return tuple(kind if (i + 1) % period == 0 else other for i in range(n))


def _alternating(n: int, first: str, second: str) -> tuple[str, ...]:
    return tuple(first if i % 2 == 0 else second for i in range(n))


def _pattern(n: int, period: int, offset: int, kind: str, other: str) -> tuple[str, ...]:
    """Layer kinds where layer ``i`` is ``kind`` when ``i % period == offset`` (0-based)."""
    return tuple(kind if i % period == offset else other for i in range(n))
