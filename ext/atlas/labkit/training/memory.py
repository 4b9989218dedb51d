"""How many bytes one GPU holds during training, and which configurations fit.

Two parts, counted for the most loaded GPU (the first pipeline stage, which also holds the
input embedding and the most microbatches in flight):

- **Model state** (:func:`state_bytes`): the parameters the GPU holds, times the bytes per
  parameter of mixed-precision Adam (:func:`~.mixed.bytes_per_param`): 18, or ``6 + 12/d``
  with the distributed optimizer. Tensor parallelism divides the matrices by ``t``; pipeline
  parallelism divides the layers by ``p``; norms are replicated.
- **Activations** (:func:`activation_bytes`): per layer and microbatch, the count of
  Korthikanti et al. generalised to an MLP of width ``f`` (``s b h (18 + 4 f / h)`` with
  selective recomputation, Megatron-LM's form), divided by ``t`` under sequence parallelism,
  times the ``L`` layers' worth that the first stage keeps in flight under 1F1B, plus the
  embedding and output-layer terms.

:func:`search` enumerates tensor and pipeline sizes for a model on ``n`` GPUs and keeps those
whose total, plus a reserve for what the model does not count (communication buffers, the
allocator's fragmentation, the CUDA context), fits in the GPU's memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from atlas.labkit.models.counting import attention_params, mlp_params
from atlas.labkit.registry.schema import Model
from atlas.labkit.training.mixed import bytes_per_param
from atlas.labkit.training.recompute import recompute_flops_overhead

ROLE = "taught"


@dataclass(frozen=True)
class Layout:
    """A parallel layout: tensor ``tp``, pipeline ``pp``, data ``dp`` (context parallelism is
    left at 1 here), sequence parallelism, the distributed optimizer, recomputation."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    sp: bool = True
    distributed_optimizer: bool = True
    recompute: str | None = "selective"  # None, "selective" or "full"

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp


def params_on_first_stage(m: Model, lay: Layout) -> float:
    """Parameters on one GPU of the first pipeline stage: its ``L/p`` layers' matrices split
    ``t`` ways, their norms whole, and the input embedding split ``t`` ways (with ``p = 1`` the
    untied output head too)."""
    if m.mlp.is_moe:
        raise ValueError(f"{m.name}: this memory model counts dense models")
    matrices = attention_params(m) + mlp_params(m, moe_layer=False, active=False)
    norms = m.norms_per_layer * m.hidden
    table = m.vocab * m.hidden
    per_gpu = (m.layers * matrices / lay.pp + table) / lay.tp + m.layers * norms / lay.pp
    if lay.pp == 1:
        per_gpu += m.hidden  # the final norm
        if not m.tied_embeddings:
            per_gpu += table / lay.tp
    return per_gpu


def state_bytes(n_params: float, lay: Layout, param_bytes: int = 2, grad_bytes: int = 4) -> float:
    """Bytes of weights, gradients and Adam state for ``n_params`` parameters on one GPU."""
    return n_params * bytes_per_param(param_bytes, grad_bytes, lay.dp, lay.distributed_optimizer)


def layer_activation_bytes(
    s: int,
    b: int,
    h: int,
    a: int,
    f: int,
    tp: int = 1,
    sp: bool = True,
    recompute: str | None = "selective",
    norm_stats: bool = False,
) -> float:
    """Activation bytes one layer keeps for one microbatch (16-bit values, byte masks).

    ``18 + 4 f / h`` per token and hidden unit: ``10`` for the inputs of the norms and of the
    column-parallel layers and the two dropout masks (whole on every TP rank unless SP), and
    ``8 + 4 f / h`` for Q, K, V, the projection input and the MLP's inner activations (split by
    ``t``). Without recomputation add ``5 a s^2 b / t`` for the attention scores. Full
    recomputation keeps the layer input only (``2 s b h``, split by ``t`` under SP).
    ``norm_stats``: add each norm's two per-token statistics (``8 s b``), which the paper omits.
    """
    sbh = s * b * h
    if recompute == "full":
        return 2 * sbh / (tp if sp else 1)
    whole, split = 10 * sbh, (8 + 4 * f / h) * sbh
    per_layer = (whole + split) / tp if sp else whole + split / tp
    if recompute is None:
        per_layer += 5 * a * s * s * b / tp
    if norm_stats:
        per_layer += 8 * s * b / (tp if sp else 1)
    return per_layer


def activation_bytes(
    m: Model, lay: Layout, seq: int, micro_batch: int, num_microbatches: int
) -> float:
    """Activation bytes on a GPU of the first pipeline stage (Megatron-LM's accounting).

    Under 1F1B the first stage keeps ``min(m, p)`` microbatches of its ``L/p`` layers, that is
    ``L * min(1, m/p)`` layers' worth. Around the layers: the token ids (8 bytes each) and the
    embedding's dropout mask for the ``p`` microbatches in flight, and with ``p = 1`` the
    output layer's input and fp32 logits (``4 s b (h + V) / t``, split over the vocabulary).
    """
    s, b, h, p = seq, micro_batch, m.hidden, lay.pp
    layer = layer_activation_bytes(
        s, b, h, m.attention.q_heads, m.mlp.intermediate, lay.tp, lay.sp, lay.recompute
    )
    total = layer * m.layers  # already divided by t
    around = 8 * s * b * p + s * b * h * p
    if p > 1:
        in_flight = min(1.0, num_microbatches / p)
        total *= in_flight
        around *= in_flight
    total += around / lay.tp
    if p == 1:
        total += 4 * s * b * (h + m.vocab) / lay.tp
    return total


def memory_per_gpu(
    m: Model, lay: Layout, seq: int, micro_batch: int, global_batch: int
) -> dict[str, float]:
    """Bytes on the most loaded GPU, by part."""
    n_micro = global_batch // (micro_batch * lay.dp)
    state = state_bytes(params_on_first_stage(m, lay), lay)
    act = activation_bytes(m, lay, seq, micro_batch, n_micro)
    return {"state": state, "activations": act, "total": state + act}


def search(
    m: Model,
    gpus: int,
    gpu_bytes: float,
    seq: int,
    micro_batch: int,
    global_batch: int,
    reserve: float = 0.10,
    tps: tuple[int, ...] = (1, 2, 4, 8),
) -> list[tuple[Layout, float]]:
    """Layouts of ``gpus`` GPUs that fit, with their fraction of ``gpu_bytes`` used.

    A layout fits when its total is below ``(1 - reserve) * gpu_bytes``. Sizes: ``t`` within a
    node (at most 8), ``p`` a divisor of the layer count, ``d`` the rest, the global batch a
    multiple of ``micro_batch * d``. Ordered by preference: the pipeline bubble,
    ``(p - 1) / (m + p - 1)`` for ``m`` microbatches, first; then the smaller ``t``.
    """
    fits = []
    for tp in tps:
        for pp in range(1, m.layers + 1):
            if m.layers % pp or gpus % (tp * pp):
                continue
            dp = gpus // (tp * pp)
            if global_batch % (micro_batch * dp):
                continue
            for recompute in ("selective", "full"):
                lay = Layout(tp=tp, pp=pp, dp=dp, recompute=recompute)
                used = memory_per_gpu(m, lay, seq, micro_batch, global_batch)["total"]
                if used <= (1.0 - reserve) * gpu_bytes:
                    fits.append((lay, used / gpu_bytes))
                    break  # selective fits: no need to pay for full recomputation

    def cost(item: tuple[Layout, float]) -> tuple[float, int, int]:
        lay = item[0]
        n_micro = global_batch // (micro_batch * lay.dp)
        bubble = (lay.pp - 1) / (n_micro + lay.pp - 1)
        kv = m.attention.kv_heads * m.attention.head_dim
        extra = recompute_flops_overhead(seq, m.hidden, lay.recompute, m.mlp.intermediate, kv, True)
        return (bubble + extra, lay.tp, lay.pp)

    return sorted(fits, key=cost)
