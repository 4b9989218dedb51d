"""Mutations of the attention chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "online-softmax-no-rescale",
        "attention",
        "attention/flash.py",
        "    acc = alpha[..., None] * acc + p @ v\n",
        "    acc = acc + p @ v\n",
        ("attention/flash-attention",),
        "online softmax: the accumulator is not rescaled by e^(m - m') when the maximum grows",
    ),
    Mutation(
        "merge-partials-equal-weights",
        "attention",
        "attention/decode.py",
        "    weights = torch.exp(lses - lse_max)\n",
        "    weights = torch.ones_like(lses)\n",
        ("attention/decode",),
        "split-KV merge weighs every partial equally instead of by exp(lse_i - max)",
    ),
    Mutation(
        "mla-absorbed-scale-nope",
        "attention",
        "attention/mla.py",
        "    scale = (q.shape[-1] + q_r.shape[-1]) ** -0.5  # the scale of the original head dimension",
        "    scale = q.shape[-1] ** -0.5  # the scale of the original head dimension",
        ("attention/mla",),
        "absorbed MLA scales by 1/sqrt(d_nope) instead of 1/sqrt(d_nope + d_r)",
    ),
    Mutation(
        "linear-state-not-decayed",
        "attention",
        "attention/linear.py",
        "        s = torch.exp(g_last).transpose(-1, -2) * s + decay_k.transpose(-1, -2) @ vc",
        "        s = s + decay_k.transpose(-1, -2) @ vc",
        ("attention/linear",),
        "the chunkwise state is not decayed by the chunk's total gate",
    ),
    Mutation(
        "window-cache-off-by-one",
        "attention",
        "attention/sparse.py",
        "p < self.sinks or p >= pos - self.window]",
        "p < self.sinks or p > pos - self.window]",
        ("attention/sparse",),
        "the sliding-window cache evicts the oldest key of the window one step early",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "fa2-grid-floor",
        "attention",
        "attention/partition.py",
        "    return math.ceil(seqlen_q / block_m) * batch * heads",
        "    return seqlen_q // block_m * batch * heads",
        ("attention/flash-attention-2-3",),
        "the FA2 grid drops the last, partial query tile (floor for ceiling)",
    ),
    Mutation(
        "causal-tiles-floor",
        "attention",
        "attention/partition.py",
        "    return [math.ceil(min(seqlen, i0 + block_m) / block_n) for i0 in range(0, seqlen, block_m)]",
        "    return [min(seqlen, i0 + block_m) // block_n for i0 in range(0, seqlen, block_m)]",
        ("attention/flash-attention-2-3",),
        "a causal query tile misses its last, partial key tile (floor for ceiling)",
    ),
    Mutation(
        "causal-pairs-off-by-one",
        "attention",
        "attention/cost.py",
        "    return sum(max(0, min(n, i + n - m + 1)) for i in range(m))",
        "    return sum(max(0, min(n, i + n - m)) for i in range(m))",
        ("attention/index",),
        "a causal query does not count the key at its own position",
    ),
    Mutation(
        "score-bytes-no-heads",
        "attention",
        "attention/cost.py",
        "    return heads * m * n * elem_bytes",
        "    return m * n * elem_bytes",
        ("attention/index",),
        "the score matrix's bytes forget the heads",
    ),
]
