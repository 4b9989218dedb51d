"""Model configurations of frontier open models, and what follows from their shapes.

Each :class:`Model` holds the figures of one released checkpoint: depth and width, the form of
attention, the MLP or mixture of experts, the vocabulary, the context length, the positional
scheme and any vision encoder. Each figure names its source in ``Model.sources``: a
configuration file read at a commit (a GitHub permalink) or a technical report through its
bibliography key (``cite:KEY``) and the table or section it comes from.

The functions below derive everything else from the shapes alone: parameters in total and per
token, FLOPs per token in prefill and decode, and KV-cache bytes. They are the taught code of
the "Frontier open models" chapter; the published totals each report states are kept apart in
``Model.reported`` so a test can hold the derivation against them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROLE = "support"

# Bytes per element of the cache dtypes the book uses.
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}

# Pinned or snapshotted commits of the repositories the figures were read from.
SLIME = "https://github.com/THUDM/slime/blob/41014d1f29e201137fdffce737bb8bac65bc5219"
DEEPSEEK_V3 = "https://github.com/deepseek-ai/DeepSeek-V3/blob/9b4e9788e4a3a731f7567338ed15d3ec549ce03b"
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
    """The linear-attention layers of a hybrid (Gated DeltaNet in Qwen3-Next).

    Each layer carries a recurrent state of ``value_heads x key_head_dim x value_head_dim``
    per sequence instead of a KV cache, plus a short causal convolution over ``conv_kernel``
    steps of the projected q, k and v.
    """

    kind: str
    key_heads: int
    value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int


@dataclass(frozen=True)
class MLP:
    """A gated MLP (SwiGLU or GeGLU: three matrices), dense or a mixture of experts.

    Dense layers use ``intermediate``. MoE layers hold ``experts`` routed experts of width
    ``expert_intermediate``, of which ``top_k`` run per token, plus ``shared_experts`` that
    always run (width ``shared_intermediate``). The first ``dense_layers`` layers are dense.
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


# ---------------------------------------------------------------------------------------------
# Counting
# ---------------------------------------------------------------------------------------------


def layer_types(m: Model) -> tuple[str, ...]:
    """Each layer's kind: ``full``, ``sliding`` or ``linear``."""
    return m.attention.layer_types or ("full",) * m.layers


def attention_params(m: Model) -> int:
    """Weights of one softmax-attention layer: projections, biases, norms, sinks."""
    a, h = m.attention, m.hidden
    if a.kind == "MLA":
        qk = a.qk_nope_dim + a.qk_rope_dim
        if a.q_lora_rank:
            q = h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * a.q_heads * qk
        else:
            q = h * a.q_heads * qk
        kv = h * (a.kv_lora_rank + a.qk_rope_dim) + a.kv_lora_rank
        kv += a.kv_lora_rank * a.q_heads * (a.qk_nope_dim + a.v_head_dim)
        o = a.q_heads * a.v_head_dim * h
        return q + kv + o
    q_out = a.q_heads * a.head_dim
    kv_out = a.kv_heads * a.head_dim
    q = h * q_out * (2 if a.output_gate else 1)
    kv = 2 * h * kv_out
    o = q_out * h
    bias = (q_out + 2 * kv_out if a.qkv_bias else 0) + (h if a.o_bias else 0)
    norm = 2 * a.head_dim if a.qk_norm else 0
    sinks = a.q_heads if a.sinks else 0
    return q + kv + o + bias + norm + sinks


def linear_attention_params(m: Model) -> int:
    """Weights of one Gated DeltaNet layer: the fused q/k/v/gate projection, the decay and
    beta projections, the short convolution, per-head decay parameters, the output norm and
    the output projection."""
    la, h = m.linear, m.hidden
    if la is None:
        return 0
    key_dim = la.key_heads * la.key_head_dim
    value_dim = la.value_heads * la.value_head_dim
    qkvz = h * (2 * key_dim + 2 * value_dim)
    ba = h * 2 * la.value_heads
    conv = (2 * key_dim + value_dim) * la.conv_kernel
    per_head = 2 * la.value_heads  # dt_bias, A_log
    norm = la.value_head_dim
    out = value_dim * h
    return qkvz + ba + conv + per_head + norm + out


def expert_params(m: Model, width: int) -> int:
    """One gated MLP of the given width (gate, up and down), with biases where the model has
    them."""
    p = 3 * m.hidden * width
    if m.mlp.expert_bias:
        p += 2 * width + m.hidden
    return p


def mlp_params(m: Model, moe_layer: bool, active: bool) -> int:
    """Weights of one MLP block; for an MoE layer, all experts or only those a token uses."""
    mlp = m.mlp
    if not moe_layer:
        return 3 * m.hidden * mlp.intermediate
    routed = mlp.top_k if active else mlp.experts
    p = routed * expert_params(m, mlp.expert_intermediate)
    p += mlp.shared_experts * expert_params(m, mlp.shared_intermediate)
    p += m.hidden * mlp.experts + (mlp.experts if mlp.router_bias else 0)
    p += m.hidden if mlp.shared_gate else 0
    return p


def vision_params(v: Vision | None, lm_hidden: int) -> int:
    """A ViT encoder plus its connector: patch embedding, positions, blocks (attention and
    MLP with biases, two norms), a final norm, and the connector to the LM width."""
    if v is None:
        return 0
    w = v.width
    norm = 2 * w if v.norm == "layernorm" else w
    embed = 3 * v.temporal_patch * v.patch * v.patch * w
    embed += w if v.norm == "layernorm" else 0  # SigLIP's patch convolution has a bias
    if v.learned_positions:
        embed += (v.image // v.patch) ** 2 * w
    mlp = (3 if v.gated_mlp else 2) * w * v.mlp + (2 if v.gated_mlp else 1) * v.mlp + w
    block = 4 * w * w + 4 * w + mlp + 2 * norm
    if v.connector == "mlp":
        merged = w * v.merge**2
        connector = norm + merged * merged + merged + merged * lm_hidden + lm_hidden
    else:
        connector = w + w * lm_hidden  # an RMSNorm on the soft tokens, then one matrix
    final_norm = norm if v.connector == "linear" else 0
    return embed + v.layers * block + final_norm + connector


def _embedding_params(m: Model) -> tuple[int, int]:
    """(input lookup table, output head) parameters."""
    table = m.vocab * m.hidden
    return table, 0 if m.tied_embeddings else table


def _body_params(m: Model, active: bool) -> int:
    total = 0
    for i, kind in enumerate(layer_types(m)):
        total += linear_attention_params(m) if kind == "linear" else attention_params(m)
        moe_layer = m.mlp.is_moe and i >= m.mlp.dense_layers
        total += mlp_params(m, moe_layer, active)
        total += m.norms_per_layer * m.hidden
    return total + m.hidden  # final norm


def params_total(m: Model) -> int:
    """Every weight of the released model (vision encoder included, MTP modules left out)."""
    table, head = _embedding_params(m)
    return _body_params(m, active=False) + table + head + vision_params(m.vision, m.hidden)


def params_active(m: Model) -> int:
    """Weights a text token uses: all but the routed experts it is not sent to.

    Both embedding tables are counted (the convention of most reports); the vision encoder is
    not, since a text token never runs it.
    """
    table, head = _embedding_params(m)
    return _body_params(m, active=True) + table + head


def attention_flops_per_key(m: Model, phase: str) -> int:
    """FLOPs one query token spends on one cached key in one softmax layer: the score
    (``2 * heads * d_qk``) and the weighted sum of values (``2 * heads * d_v``).

    MLA runs differently in the two phases: prefill expands the latent into per-head keys and
    values (``d_qk = nope + rope``, ``d_v = v_head_dim``); decode absorbs the up-projections
    into the query and output, and attends in the latent space (``d_qk = kv_lora_rank + rope``,
    ``d_v = kv_lora_rank``), which is what makes its cache small.
    """
    a = m.attention
    if a.kind == "MLA":
        if phase == "decode":
            return 2 * a.q_heads * (a.kv_lora_rank + a.qk_rope_dim + a.kv_lora_rank)
        return 2 * a.q_heads * (a.qk_nope_dim + a.qk_rope_dim + a.v_head_dim)
    return 4 * a.q_heads * a.head_dim


def linear_attention_flops(m: Model) -> int:
    """FLOPs per token of one linear-attention layer's recurrence: read the state with the
    query, read it with the key, and write the rank-one delta update, ``2 d_k d_v`` each per
    value head (the projections are counted with the weights)."""
    la = m.linear
    return 0 if la is None else 3 * 2 * la.value_heads * la.key_head_dim * la.value_head_dim


def non_matmul_params(m: Model, active: bool = True) -> int:
    """Weights that are not a matrix a token is multiplied by: norm scales, biases, attention
    sinks and the per-head decay parameters of linear layers. They cost no matmul FLOPs."""
    a, h = m.attention, m.hidden
    n = 0
    for i, kind in enumerate(layer_types(m)):
        n += m.norms_per_layer * h
        if kind == "linear":
            la = m.linear
            n += 2 * la.value_heads + la.value_head_dim
        elif a.kind == "MLA":
            n += (a.q_lora_rank if a.q_lora_rank else 0) + a.kv_lora_rank
        else:
            n += (a.q_heads + 2 * a.kv_heads) * a.head_dim if a.qkv_bias else 0
            n += h if a.o_bias else 0
            n += 2 * a.head_dim if a.qk_norm else 0
            n += a.q_heads if a.sinks else 0
        mlp = m.mlp
        if mlp.is_moe and i >= mlp.dense_layers:
            routed = mlp.top_k if active else mlp.experts
            if mlp.expert_bias:
                n += routed * (2 * mlp.expert_intermediate + h)
                n += mlp.shared_experts * (2 * mlp.shared_intermediate + h)
            n += mlp.experts if mlp.router_bias else 0
    return n + h  # final norm


def flops_per_token(m: Model, context: int, phase: str = "decode") -> float:
    """Forward FLOPs per token: ``2 x`` the matrix weights it uses, plus attention.

    The matrix weights are the active parameters less the embedding lookup (a gather, no
    FLOPs; a tied table still counts once, as the output head) and less norms, biases and
    sinks (:func:`non_matmul_params`). Attention: ``phase="decode"`` is one new token after
    ``context`` cached tokens, attending to ``context`` keys; ``phase="prefill"`` is the mean
    over a causal prompt of ``context`` tokens, whose ``i``-th token attends to ``i`` keys
    (``(context + 1) / 2`` on average). Sliding layers see at most ``window`` keys; linear
    layers cost the same at any context.
    """
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase must be 'prefill' or 'decode', got {phase!r}")
    table, _ = _embedding_params(m)
    matmul = params_active(m) - non_matmul_params(m) - (0 if m.tied_embeddings else table)
    per_key = attention_flops_per_key(m, phase)
    window = m.attention.window
    attn = 0.0
    for kind in layer_types(m):
        if kind == "linear":
            attn += linear_attention_flops(m)
            continue
        if phase == "decode":
            keys = min(context, window) if kind == "sliding" else context
        elif kind == "sliding":
            # mean over i = 1..context of min(i, window)
            w = min(window, context)
            keys = (w * (w + 1) / 2 + (context - w) * w) / context
        else:
            keys = (context + 1) / 2
        attn += per_key * keys
    return float(2 * matmul + attn)


def kv_bytes_per_token(m: Model, dtype: str = "bf16") -> int:
    """Bytes of cache one token adds, over all layers that keep a per-token cache.

    GQA/MHA/MQA: K and V, ``2 * kv_heads * head_dim`` per layer. MLA: the latent and the
    shared rope key, ``kv_lora_rank + qk_rope_dim`` per layer. Linear layers keep a fixed-size
    state instead (:func:`state_bytes`). Sliding layers are counted here in full, as they are
    while the sequence is shorter than the window; :func:`kv_bytes` caps them.
    """
    return sum(_kv_bytes_by_kind(m, dtype).values())


def _kv_bytes_by_kind(m: Model, dtype: str) -> dict[str, int]:
    nbytes = DTYPE_BYTES[dtype]
    a = m.attention
    if a.kind == "MLA":
        per_layer = (a.kv_lora_rank + a.qk_rope_dim) * nbytes
    else:
        per_layer = 2 * a.kv_heads * a.head_dim * nbytes
    out = {"full": 0, "sliding": 0}
    for kind in layer_types(m):
        if kind in out:
            out[kind] += per_layer
    return out


def state_bytes(m: Model, dtype: str = "fp32") -> int:
    """Bytes of recurrent state one sequence holds over all linear layers, at any length:
    the ``value_heads x d_k x d_v`` matrix and the convolution's last ``conv_kernel - 1``
    inputs."""
    la = m.linear
    if la is None:
        return 0
    n_linear = sum(1 for k in layer_types(m) if k == "linear")
    conv_dim = 2 * la.key_heads * la.key_head_dim + la.value_heads * la.value_head_dim
    per_layer = la.value_heads * la.key_head_dim * la.value_head_dim
    per_layer += (la.conv_kernel - 1) * conv_dim
    return n_linear * per_layer * DTYPE_BYTES[dtype]


def kv_bytes(m: Model, tokens: int, dtype: str = "bf16") -> int:
    """Cache bytes of one sequence of ``tokens`` tokens: full layers grow with every token,
    sliding layers stop at the window. Linear-layer state is not included (see
    :func:`state_bytes`)."""
    by_kind = _kv_bytes_by_kind(m, dtype)
    capped = min(tokens, m.attention.window) if m.attention.window else tokens
    return by_kind["full"] * tokens + by_kind["sliding"] * capped


# ---------------------------------------------------------------------------------------------
# The models
# ---------------------------------------------------------------------------------------------


def _every(n: int, period: int, kind: str, other: str) -> tuple[str, ...]:
    """Layer kinds where every ``period``-th layer (the last of each group) is ``kind``."""
    return tuple(kind if (i + 1) % period == 0 else other for i in range(n))


def _alternating(n: int, first: str, second: str) -> tuple[str, ...]:
    return tuple(first if i % 2 == 0 else second for i in range(n))


_MODELS: list[Model] = []


def _add(m: Model) -> Model:
    _MODELS.append(m)
    return m


# --- Llama 2 and 3.1 (dense, GQA except Llama 2 7B) -------------------------------------------

_add(
    Model(
        name="llama-2-7b",
        family="Llama 2",
        layers=32,
        hidden=4096,
        vocab=32000,
        attention=Attention(kind="MHA", q_heads=32, kv_heads=32, head_dim=128),
        mlp=MLP(intermediate=11008),
        tied_embeddings=False,
        context=4096,
        position="RoPE (base 10,000)",
        reported=Reported(
            total="7B", active="7B", ref="cite:touvron2023llama", where="Table 1 (7B)"
        ),
        sources=(
            Source(
                "cite:touvron2023llama",
                "Section 2.2 and Table 1: same architecture as Llama 1, 4k context, 32k vocabulary",
                ("vocab", "context", "tied_embeddings"),
            ),
            Source(
                "https://github.com/meta-llama/llama/blob/"
                "689c7f261b9c5514636ecc3c5fefefcbb3e6eed7/llama/model.py",
                "ModelArgs defaults (the 7B shape: dim 4096, 32 layers, 32 heads, multiple_of "
                "256); FeedForward: int(2 * 4 * 4096 / 3) rounded up to a multiple of 256 is "
                "11008; rotary base 10000",
                ("layers", "hidden", "attention", "mlp", "position"),
            ),
        ),
    )
)

_LLAMA3_REPORT = "cite:grattafiori2024llama"
_LLAMA3_TABLE = "Table 3: layers, model and FFN dimension, heads, KV heads, RoPE base 500,000"
_LLAMA31_8B_CONFIG = Source(
    f"{SLIME}/scripts/models/llama3.1-8B-Instruct.sh",
    "Megatron arguments of Llama 3.1 8B: vocabulary 128256, 131072 positions, untied head",
    ("vocab", "context", "tied_embeddings"),
)

for _name, _layers, _hidden, _ffn, _heads, _total in (
    ("llama-3.1-8b", 32, 4096, 14336, 32, "8B"),
    ("llama-3.1-70b", 80, 8192, 28672, 64, "70B"),
    ("llama-3.1-405b", 126, 16384, 53248, 128, "405B"),
):
    _add(
        Model(
            name=_name,
            family="Llama 3.1",
            layers=_layers,
            hidden=_hidden,
            vocab=128256,
            attention=Attention(kind="GQA", q_heads=_heads, kv_heads=8, head_dim=128),
            mlp=MLP(intermediate=_ffn),
            tied_embeddings=False,
            context=131072,
            position="RoPE (base 500,000, Llama 3 frequency scaling to 128k)",
            reported=Reported(total=_total, active=_total, ref=_LLAMA3_REPORT, where="Table 3"),
            sources=(
                Source(_LLAMA3_REPORT, _LLAMA3_TABLE, ("layers", "hidden", "attention", "mlp",
                                                         "position")),
                _LLAMA31_8B_CONFIG,
            ),
            notes="The three sizes share one tokenizer and the 128k context (report, Section 3).",
        )
    )

# --- Mixtral ----------------------------------------------------------------------------------

_add(
    Model(
        name="mixtral-8x7b",
        family="Mixtral",
        layers=32,
        hidden=4096,
        vocab=32000,
        attention=Attention(kind="GQA", q_heads=32, kv_heads=8, head_dim=128),
        mlp=MLP(experts=8, top_k=2, expert_intermediate=14336),
        tied_embeddings=False,
        context=32768,
        position="RoPE",
        reported=Reported(
            total="47B",
            active="13B",
            ref="cite:jiang2024mixtral",
            where="Section 2.1: 47B parameters, 13B active per token",
        ),
        sources=(
            Source(
                "cite:jiang2024mixtral",
                "Table 1: dim 4096, 32 layers, head_dim 128, hidden_dim 14336, 32 heads, 8 KV "
                "heads, context 32768, vocab 32000, 8 experts, top-2",
                ("layers", "hidden", "vocab", "attention", "mlp", "context", "position",
                 "tied_embeddings"),
            ),
        ),
    )
)

# --- Qwen3 dense, MoE and Next ----------------------------------------------------------------

for _name, _layers, _hidden, _ffn, _heads, _total in (
    ("qwen3-8b", 36, 4096, 12288, 32, "8B"),
    ("qwen3-32b", 64, 5120, 25600, 64, "32B"),
):
    _add(
        Model(
            name=_name,
            family="Qwen3",
            layers=_layers,
            hidden=_hidden,
            vocab=151936,
            attention=Attention(kind="GQA", q_heads=_heads, kv_heads=8, head_dim=128,
                                qk_norm=True),
            mlp=MLP(intermediate=_ffn),
            tied_embeddings=False,
            context=131072,
            position="RoPE (base 1,000,000; YaRN from 32k to 128k)",
            reported=Reported(total=_total, active=_total, ref="cite:yang2025qwen3",
                              where="Table 1"),
            sources=(
                Source(
                    f"{SLIME}/scripts/models/{_name.replace('b', 'B')}.sh",
                    "Megatron arguments: layers, hidden, FFN, heads, query groups, kv-channels, "
                    "vocabulary, QK layernorm, untied head",
                    ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings"),
                ),
                Source(
                    "cite:yang2025qwen3",
                    "Table 1 (context 128K) and Section 2 (RoPE base, YaRN)",
                    ("context", "position"),
                ),
            ),
        )
    )

_add(
    Model(
        name="qwen3-0.6b",
        family="Qwen3",
        layers=28,
        hidden=1024,
        vocab=151936,
        attention=Attention(kind="GQA", q_heads=16, kv_heads=8, head_dim=128, qk_norm=True),
        mlp=MLP(intermediate=3072),
        tied_embeddings=True,
        context=32768,
        position="RoPE (base 1,000,000)",
        reported=Reported(total="0.6B", active="0.6B", ref="cite:yang2025qwen3",
                          where="Table 1 (the model's name)"),
        sources=(
            Source(
                f"{SLIME}/scripts/models/qwen3-0.6B.sh",
                "Megatron arguments: 28 layers, hidden 1024, FFN 3072, 16 heads / 8 query "
                "groups, kv-channels 128, QK layernorm, vocabulary 151936, no untie flag "
                "(embeddings tied)",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings",
                 "position"),
            ),
            Source("cite:yang2025qwen3", "Table 1 (context 32K for the 0.6B model)",
                   ("context",)),
        ),
        notes="The model nano-vllm's examples run; the serving chapter sizes its cache.",
    )
)

_add(
    Model(
        name="qwen3-235b-a22b",
        family="Qwen3",
        layers=94,
        hidden=4096,
        vocab=151936,
        attention=Attention(kind="GQA", q_heads=64, kv_heads=4, head_dim=128, qk_norm=True),
        mlp=MLP(experts=128, top_k=8, expert_intermediate=1536),
        tied_embeddings=False,
        context=131072,
        position="RoPE (base 1,000,000; YaRN from 32k to 128k)",
        reported=Reported(total="235B", active="22B", ref="cite:yang2025qwen3", where="Table 2"),
        sources=(
            Source(
                f"{SLIME}/scripts/models/qwen3-235B-A22B.sh",
                "Megatron arguments: 94 layers, hidden 4096, 64 heads / 4 query groups, "
                "kv-channels 128, 128 experts top-8 of width 1536, every layer MoE",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings"),
            ),
            Source("cite:yang2025qwen3", "Table 2 (context 128K)", ("context", "position")),
        ),
    )
)

_add(
    Model(
        name="qwen3-next-80b-a3b",
        family="Qwen3-Next",
        layers=48,
        hidden=2048,
        vocab=151936,
        attention=Attention(
            kind="hybrid",
            q_heads=16,
            kv_heads=2,
            head_dim=256,
            layer_types=_every(48, 4, "full", "linear"),
            qk_norm=True,
            output_gate=True,
        ),
        linear=LinearAttention(
            kind="Gated DeltaNet",
            key_heads=16,
            value_heads=32,
            key_head_dim=128,
            value_head_dim=128,
            conv_kernel=4,
        ),
        mlp=MLP(
            experts=512,
            top_k=10,
            expert_intermediate=512,
            shared_experts=1,
            shared_intermediate=512,
            shared_gate=True,
        ),
        tied_embeddings=False,
        context=262144,
        position="partial RoPE (a quarter of each head, base 10,000,000) in the full layers",
        mtp_layers=1,
        reported=Reported(
            total="80B",
            active="3B",
            ref="cite:qwen2025qwen3next",
            where="model card: 80B total, 3B activated",
            total_excludes="",
            active_excludes="both",
        ),
        sources=(
            Source(
                f"{SLIME}/scripts/models/qwen3-next-80B-A3B.sh",
                "Megatron arguments: 48 layers, hidden 2048, 16 heads / 2 query groups, "
                "kv-channels 256, gated attention, 512 experts top-10 of width 512, a shared "
                "expert of width 512 with a gate, rotary percent 0.25, base 1e7",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings",
                 "position"),
            ),
            Source(
                f"{TRANSFORMERS}/src/transformers/models/qwen3_next/configuration_qwen3_next.py",
                "Qwen3NextConfig, whose defaults are the Qwen3-Next-80B-A3B-Instruct checkpoint: "
                "linear_num_key_heads 16, linear_num_value_heads 32, key/value head dim 128, "
                "conv kernel 4; every fourth layer full attention ((i + 1) % 4 == 0)",
                ("linear",),
            ),
            Source(
                "cite:qwen2025qwen3next",
                "80B total, 3B activated; hybrid layout 3 Gated DeltaNet : 1 gated attention; "
                "native context 262,144 tokens",
                ("context",),
            ),
        ),
    )
)

# --- DeepSeek-V3 (R1 shares the architecture) and Kimi K2 (MLA + fine-grained MoE) -----------

_add(
    Model(
        name="deepseek-v3",
        family="DeepSeek-V3 / R1",
        layers=61,
        hidden=7168,
        vocab=129280,
        attention=Attention(
            kind="MLA",
            q_heads=128,
            kv_heads=128,
            head_dim=192,
            q_lora_rank=1536,
            kv_lora_rank=512,
            qk_nope_dim=128,
            qk_rope_dim=64,
            v_head_dim=128,
        ),
        mlp=MLP(
            intermediate=18432,
            experts=256,
            top_k=8,
            expert_intermediate=2048,
            shared_experts=1,
            shared_intermediate=2048,
            dense_layers=3,
            router_bias=True,
        ),
        tied_embeddings=False,
        context=131072,
        position="decoupled RoPE on a 64-dim key shared by all heads (YaRN to 128k)",
        mtp_layers=1,
        reported=Reported(
            total="671B",
            active="37B",
            ref="cite:deepseekai2024deepseekv3",
            where="Section 1 and Table 1: 671B total, 37B activated (MTP module excluded)",
        ),
        sources=(
            Source(
                f"{DEEPSEEK_V3}/inference/configs/config_671B.json",
                "the released inference configuration",
                ("layers", "hidden", "vocab", "attention", "mlp"),
            ),
            Source(
                f"{SLIME}/scripts/models/deepseek-v3.sh",
                "Megatron arguments: untied output head, RoPE with YaRN scaling factor 40",
                ("tied_embeddings", "position"),
            ),
            Source(
                f"{DEEPSEEK_V3}/README.md",
                "model summary table: context length 128K; 671B main model plus 14B MTP module",
                ("context",),
            ),
        ),
    )
)

_add(
    Model(
        name="kimi-k2",
        family="Kimi K2",
        layers=61,
        hidden=7168,
        vocab=163840,
        attention=Attention(
            kind="MLA",
            q_heads=64,
            kv_heads=64,
            head_dim=192,
            q_lora_rank=1536,
            kv_lora_rank=512,
            qk_nope_dim=128,
            qk_rope_dim=64,
            v_head_dim=128,
        ),
        mlp=MLP(
            intermediate=18432,
            experts=384,
            top_k=8,
            expert_intermediate=2048,
            shared_experts=1,
            shared_intermediate=2048,
            dense_layers=1,
            router_bias=True,
        ),
        tied_embeddings=False,
        context=131072,
        position="decoupled RoPE as in DeepSeek-V3 (base 50,000, YaRN factor 32)",
        reported=Reported(
            total="1.04T",
            active="32B",
            ref="cite:kimiteam2025kimi",
            where="abstract: 1.04T total, 32B activated",
        ),
        sources=(
            Source(
                f"{SLIME}/scripts/models/kimi-k2.sh",
                "Megatron arguments: 61 layers (1 dense), hidden 7168, 64 heads, MLA ranks, "
                "384 experts top-8 of width 2048, 1 shared, vocabulary 163840, RoPE base 50000",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings",
                 "position"),
            ),
            Source("cite:kimiteam2025kimi", "Section 4 (context 128k)", ("context",)),
        ),
    )
)

# --- GLM-4.5 ----------------------------------------------------------------------------------

_add(
    Model(
        name="glm-4.5",
        family="GLM-4.5",
        layers=92,
        hidden=5120,
        vocab=151552,
        attention=Attention(kind="GQA", q_heads=96, kv_heads=8, head_dim=128, qkv_bias=True,
                            qk_norm=True),
        mlp=MLP(
            intermediate=12288,
            experts=160,
            top_k=8,
            expert_intermediate=1536,
            shared_experts=1,
            shared_intermediate=1536,
            dense_layers=3,
            router_bias=True,
        ),
        tied_embeddings=False,
        context=131072,
        position="partial RoPE (half of each head, base 1,000,000)",
        mtp_layers=1,
        reported=Reported(
            total="355B",
            active="32B",
            ref="cite:zeng2025glm45",
            where="Table 1: 355B total, 32B activated (the report does not say whether the "
            "embedding tables are counted; the count without them matches)",
            active_excludes="both",
        ),
        sources=(
            Source(
                f"{SLIME}/scripts/models/glm4.5-355B-A32B.sh",
                "Megatron arguments: 3 dense + 89 MoE layers, hidden 5120, FFN 12288, 96 heads "
                "/ 8 query groups, kv-channels 128, QKV bias, QK layernorm, rotary percent 0.5, "
                "160 experts top-8 of width 1536, 1 shared, vocabulary 151552",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings",
                 "position"),
            ),
            Source("cite:zeng2025glm45", "Section 2 (context 128K)", ("context",)),
        ),
    )
)

# --- gpt-oss ----------------------------------------------------------------------------------

_add(
    Model(
        name="gpt-oss-120b",
        family="gpt-oss",
        layers=36,
        hidden=2880,
        vocab=201088,
        attention=Attention(
            kind="GQA",
            q_heads=64,
            kv_heads=8,
            head_dim=64,
            layer_types=_alternating(36, "sliding", "full"),
            window=128,
            qkv_bias=True,
            o_bias=True,
            sinks=True,
        ),
        mlp=MLP(experts=128, top_k=4, expert_intermediate=2880, expert_bias=True,
                router_bias=True),
        tied_embeddings=False,
        context=131072,
        position="RoPE (base 150,000) with YaRN x32 from 4,096",
        reported=Reported(
            total="116.83B",
            active="5.13B",
            ref="cite:openai2025gptoss",
            where="Table 1: 116.83B total, 5.13B active (embedding lookup left out)",
            active_excludes="input",
        ),
        sources=(
            Source(
                f"{GPT_OSS}/gpt_oss/torch/model.py",
                "ModelConfig defaults (the 120b shape) and AttentionBlock: sliding window on "
                "even layers, sinks, biases; MLPBlock: gate/up/down with biases, router bias",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings",
                 "position"),
            ),
            Source("cite:openai2025gptoss", "Section 2: 131,072-token context", ("context",)),
        ),
    )
)

# --- Gemma 3 (sliding-window GQA, vision encoder) ---------------------------------------------

_add(
    Model(
        name="gemma-3-27b",
        family="Gemma 3",
        layers=62,
        hidden=5376,
        vocab=262144,
        attention=Attention(
            kind="GQA",
            q_heads=32,
            kv_heads=16,
            head_dim=128,
            layer_types=_every(62, 6, "full", "sliding"),
            window=1024,
            qk_norm=True,
        ),
        mlp=MLP(intermediate=21504),
        tied_embeddings=True,
        context=131072,
        position="RoPE: base 10,000 in local layers, 1,000,000 (scaled x8) in global layers",
        norms_per_layer=4,
        vision=Vision(
            name="SigLIP",
            layers=27,
            width=1152,
            heads=16,
            mlp=4304,
            patch=14,
            image=896,
            tokens=256,
        ),
        reported=Reported(
            total="27B",
            active="27B",
            ref="cite:gemmateam2025gemma",
            where="Table 1: vision encoder 417M, embedding 1,416M, non-embedding 25,600M",
        ),
        sources=(
            Source(
                f"{GEMMA}/gemma/gm/nn/_gemma.py",
                "Gemma3_27B: num_embed, embed_dim, hidden_dim, heads, head_dim, KV heads, "
                "post-attention/FFW norms, QK norm, attention pattern 5 local : 1 global over "
                "62 layers, sliding window 1024, RoPE bases",
                ("layers", "hidden", "vocab", "attention", "mlp", "position"),
            ),
            Source(
                f"{GEMMA}/gemma/gm/nn/vision/_vision_utils.py",
                "ViTModel defaults (patch 14, width 1152, depth 27, MLP 4304, 16 heads) and, in "
                "_vision.py, SigLiPFromPatches (896 x 896 images pooled to 256 tokens)",
                ("vision",),
            ),
            Source(
                "cite:gemmateam2025gemma",
                "Section 2: 128K context, tied embeddings (shared with the output layer)",
                ("context", "tied_embeddings"),
            ),
        ),
    )
)


_add(
    Model(
        name="gpt-oss-20b",
        family="gpt-oss",
        layers=24,
        hidden=2880,
        vocab=201088,
        attention=Attention(
            kind="GQA",
            q_heads=64,
            kv_heads=8,
            head_dim=64,
            layer_types=_alternating(24, "sliding", "full"),
            window=128,
            qkv_bias=True,
            o_bias=True,
            sinks=True,
        ),
        mlp=MLP(experts=32, top_k=4, expert_intermediate=2880, expert_bias=True,
                router_bias=True),
        tied_embeddings=False,
        context=131072,
        position="RoPE (base 150,000) with YaRN x32 from 4,096",
        reported=Reported(
            total="20.91B",
            active="3.61B",
            ref="cite:openai2025gptoss",
            where="Table 1: 20.91B total, 3.61B active (embedding lookup left out)",
            active_excludes="input",
        ),
        sources=(
            Source(
                "cite:openai2025gptoss",
                "Section 2: 24 layers and 32 experts per MoE block for gpt-oss-20b, the rest "
                "as gpt-oss-120b; 131,072-token context",
                ("layers", "mlp", "context"),
            ),
            Source(
                f"{GPT_OSS}/gpt_oss/torch/model.py",
                "ModelConfig and the blocks: hidden 2880, 64 query / 8 KV heads of 64, sliding "
                "window 128 on even layers, sinks, biases, vocabulary 201088, untied head",
                ("hidden", "vocab", "attention", "tied_embeddings", "position"),
            ),
        ),
    )
)

# --- Qwen2.5-VL (a vision-language model: ViT with window attention, MLP merger) -----------

_add(
    Model(
        name="qwen2.5-vl-7b",
        family="Qwen2.5-VL",
        layers=28,
        hidden=3584,
        vocab=151646,
        attention=Attention(kind="GQA", q_heads=28, kv_heads=4, head_dim=128, qkv_bias=True),
        mlp=MLP(intermediate=18944),
        tied_embeddings=False,
        context=32768,
        position="MRoPE: rotary sections for time, height and width (absolute time)",
        vision=Vision(
            name="Qwen2.5-VL ViT (window attention; full attention in blocks 7, 15, 23, 31)",
            layers=32,
            width=1280,
            heads=16,
            mlp=3456,
            patch=14,
            merge=2,
            temporal_patch=2,
            gated_mlp=True,
            learned_positions=False,
            norm="rmsnorm",
            connector="mlp",
        ),
        sources=(
            Source(
                "cite:bai2025qwen25vl",
                "Table 1 (7B column): ViT hidden 1280, 32 layers, 16 heads, intermediate 3456, "
                "patch 14, window 112, full-attention blocks {7, 15, 23, 31}; merger 1280 -> "
                "3584; LLM hidden 3584, 28 layers, 4 KV heads of 128, intermediate 18944, "
                "untied embeddings, vocabulary 151646; Section 2.1: RMSNorm and SwiGLU in the "
                "ViT, 2 x 2 patches merged by a two-layer MLP, MRoPE",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings",
                 "position", "vision"),
            ),
            Source(
                f"{QWEN25_VL}/README.md",
                "the released config.json is set for contexts up to 32,768 tokens",
                ("context",),
            ),
        ),
        notes="Query heads are hidden / head size (3584 / 128 = 28); the report's table gives "
        "KV heads and head size. QKV biases as in Qwen2.5.",
    )
)


MODELS: dict[str, Model] = {m.name: m for m in _MODELS}


def model(name: str) -> Model:
    """The registered model called ``name`` (see ``MODELS`` for the names)."""
    try:
        return MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None


# --- added for training ---
# Models the training chapter needs that are not frontier open models, kept out of MODELS so
# that the frontier table and its checks are unchanged. PaLM 540B: the run whose model FLOPs
# utilisation (MFU) the training chapter recomputes from its reported throughput.
OTHER_MODELS: dict[str, Model] = {
    "palm-540b": Model(
        name="palm-540b",
        family="PaLM",
        layers=118,
        hidden=18432,
        vocab=256000,
        attention=Attention(kind="MQA", q_heads=48, kv_heads=1, head_dim=256),
        mlp=MLP(intermediate=4 * 18432),
        tied_embeddings=True,
        context=2048,
        position="RoPE",
        norms_per_layer=1,
        reported=Reported(
            total="540.35B", active="540.35B", ref="cite:chowdhery2022palm", where="Table 1"
        ),
        sources=(
            Source(
                "cite:chowdhery2022palm",
                "Table 1 (540B: 118 layers, 48 heads, d_model 18432, 540.35B parameters); "
                "Section 2: SwiGLU with d_ff = 4 d_model, parallel layers (one LayerNorm a "
                "layer), multi-query attention with head size 256, RoPE, shared input-output "
                "embeddings, a 256k SentencePiece vocabulary; Section 5: sequence length 2048",
                ("layers", "hidden", "vocab", "attention", "mlp", "tied_embeddings",
                 "context", "position"),
            ),
        ),
        notes="Parallel attention and MLP branches share one LayerNorm; no biases.",
    ),
}


def other_model(name: str) -> Model:
    """A model of :data:`OTHER_MODELS` (outside the frontier table)."""
    try:
        return OTHER_MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(OTHER_MODELS)}") from None
