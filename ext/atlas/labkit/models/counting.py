"""What follows from a model's shape alone: parameters, FLOPs per token, KV-cache bytes.

The taught code of the "Frontier open models" chapter (``source/models/counting.md`` shows it):
from the figures of a :class:`~atlas.labkit.registry.schema.Model`, the parameters in total and
per token, the FLOPs per token in prefill and decode, and the bytes of the KV cache and of a
linear-attention state. Every chapter that needs one of these numbers calls these functions;
the checks hold them against the totals each report publishes and against a model built in
torch.
"""

from __future__ import annotations

from atlas.labkit.registry.schema import LinearAttention, Model, Vision

ROLE = "taught"

# Bytes per element of the cache dtypes the book uses.
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}


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
    """Weights of one linear layer, by kind.

    Gated DeltaNet: the fused q/k/v/gate projection, the decay and beta projections, the
    short convolution, per-head decay parameters, the output norm and the output projection.
    KDA: separate q, k, v projections with a convolution each, a low-rank per-channel decay
    gate (``h -> d_v -> heads x d_k``) with its biases, a beta projection, a low-rank output
    gate, the output norm and projection. Lightning: a fused q/k/v projection, an output gate,
    a norm over all heads and the output projection. Mamba: the input projection to twice the
    inner width, the depthwise convolution, the projection to the step size and ``B``, ``C``,
    the step-size up-projection, ``A`` and ``D``, three small norms and the output projection.
    """
    la, h = m.linear, m.hidden
    if la is None:
        return 0
    key_dim = la.key_heads * la.key_head_dim
    value_dim = la.value_heads * la.value_head_dim
    if la.kind == "KDA":
        qkv = h * (2 * key_dim + value_dim)
        conv = (2 * key_dim + value_dim) * la.conv_kernel
        gate_dim = la.value_heads * la.key_head_dim
        decay = h * la.value_head_dim + la.value_head_dim * gate_dim + gate_dim  # + dt_bias
        beta = h * la.value_heads + la.value_heads  # b_proj, A_log
        out_gate = h * la.value_head_dim + la.value_head_dim * value_dim + value_dim
        return qkv + conv + decay + beta + out_gate + la.value_head_dim + value_dim * h
    if la.kind == "lightning":
        return h * 3 * value_dim + h * value_dim + value_dim + value_dim * h
    if la.kind == "Mamba":
        inner, n, r = la.inner, la.state_dim, la.dt_rank
        conv = inner * la.conv_kernel + inner  # depthwise weights and bias
        x_proj = inner * (r + 2 * n)
        dt_proj = r * inner + inner
        norms = r + 2 * n
        return h * 2 * inner + conv + x_proj + dt_proj + inner * n + inner + norms + inner * h
    qkvz = h * (2 * key_dim + 2 * value_dim)
    ba = h * 2 * la.value_heads
    conv = (2 * key_dim + value_dim) * la.conv_kernel
    per_head = 2 * la.value_heads  # dt_bias, A_log
    norm = la.value_head_dim
    out = value_dim * h
    return qkvz + ba + conv + per_head + norm + out


def is_moe_layer(m: Model, i: int) -> bool:
    """Whether layer ``i`` (0-based) runs the mixture of experts rather than a dense MLP."""
    mlp = m.mlp
    return mlp.is_moe and i >= mlp.dense_layers and i % mlp.moe_period == mlp.moe_offset


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
        total += mlp_params(m, is_moe_layer(m, i), active)
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
    return 0 if la is None else 3 * 2 * _state_numbers(la)


def _linear_non_matmul(la: LinearAttention) -> int:
    """The non-matrix weights of one linear layer: decay parameters, norms, biases."""
    if la.kind == "KDA":
        gate_dim = la.value_heads * la.key_head_dim
        return gate_dim + la.value_heads + la.value_heads * la.value_head_dim + la.value_head_dim
    if la.kind == "lightning":
        return la.value_heads * la.value_head_dim
    if la.kind == "Mamba":
        inner = la.inner
        return inner + inner + inner * la.state_dim + inner + la.dt_rank + 2 * la.state_dim
    return 2 * la.value_heads + la.value_head_dim


def non_matmul_params(m: Model, active: bool = True) -> int:
    """Weights that are not a matrix a token is multiplied by: norm scales, biases, attention
    sinks and the per-head decay parameters of linear layers. They cost no matmul FLOPs."""
    a, h = m.attention, m.hidden
    n = 0
    for i, kind in enumerate(layer_types(m)):
        n += m.norms_per_layer * h
        if kind == "linear":
            n += _linear_non_matmul(m.linear)
        elif a.kind == "MLA":
            n += (a.q_lora_rank if a.q_lora_rank else 0) + a.kv_lora_rank
        else:
            n += (a.q_heads + 2 * a.kv_heads) * a.head_dim if a.qkv_bias else 0
            n += h if a.o_bias else 0
            n += 2 * a.head_dim if a.qk_norm else 0
            n += a.q_heads if a.sinks else 0
        mlp = m.mlp
        if is_moe_layer(m, i):
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


def _state_numbers(la: LinearAttention) -> int:
    """Numbers in the recurrent state of one linear layer (the convolution's inputs aside):
    ``value_heads x d_k x d_v`` for the attention-like kinds, ``inner x state_dim`` for Mamba."""
    if la.kind == "Mamba":
        return la.inner * la.state_dim
    return la.value_heads * la.key_head_dim * la.value_head_dim


def _conv_numbers(la: LinearAttention) -> int:
    """Inputs the short convolution keeps: its last ``conv_kernel - 1`` steps of every
    channel it convolves (q, k and v; Mamba: the inner channels; none without a convolution)."""
    if la.conv_kernel == 0:
        return 0
    channels = la.inner if la.kind == "Mamba" else 2 * la.key_heads * la.key_head_dim
    if la.kind != "Mamba":
        channels += la.value_heads * la.value_head_dim
    return (la.conv_kernel - 1) * channels


def state_bytes(m: Model, dtype: str = "fp32") -> int:
    """Bytes of recurrent state one sequence holds over all linear layers, at any length:
    each layer's state matrix (:func:`_state_numbers`) and its convolution's last inputs."""
    la = m.linear
    if la is None:
        return 0
    n_linear = sum(1 for k in layer_types(m) if k == "linear")
    per_layer = _state_numbers(la) + _conv_numbers(la)
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
