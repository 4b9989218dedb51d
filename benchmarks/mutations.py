"""Mutation checks for labs: plant a realistic bug in labkit, run the labs, see who notices.

A lab that only prints what its own code computed passes whatever that code does; a lab that
compares with something independent fails when the code is wrong. This tool measures which:
each entry of ``MUTATIONS`` is a named, minimal patch (one exact text replaced in one labkit
file) with the pages whose labs should notice. For each, the tool copies ``ext/`` to a
temporary book root (every other entry of the repository is linked, so upstream objects and
the registry are found as usual), applies the patch there, runs the labs of the listed pages
against the copy, and records which labs fail. It prints one table row per mutation.

Usage (from the repository root)::

    .venv/bin/python benchmarks/mutations.py                  # every mutation
    .venv/bin/python benchmarks/mutations.py --chapter serving
    .venv/bin/python benchmarks/mutations.py --only ring-no-scale zero2-keeps-grads
    .venv/bin/python benchmarks/mutations.py --list

Exit status 0 when every mutation run was caught by at least one lab, 1 otherwise, 2 when the
unmutated labs do not pass (the table would mean nothing). A lab that skips itself (upstream
objects absent) catches nothing: run ``make upstreams`` first. A lab that ``:needs: cuda`` is
left out on a machine without a GPU, as a build leaves it unreported.

How it runs: this process imports torch once; each page's labs run in a child forked from it,
which drops every ``atlas`` module it inherited, puts the temporary copy first on
``sys.path`` and runs the page's labs in order with the book's own lab worker
(``atlas.labs.worker.run_lab``, seeded as in the build). A page is stopped after
``--timeout`` seconds; its remaining labs count as timed out, which a build also reports.

Adding a mutation: append a ``Mutation`` with a short name, the file under
``ext/atlas/labkit``, the exact text to replace (it must occur exactly once), its
replacement, the pages (docnames) whose labs should catch it, and one line saying what bug it
models. Keep it realistic and minimal: an off-by-one, a wrong comparison, a dropped factor, a
step skipped; the kind of bug a reviewer would not see by reading.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import select
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "source"
FENCE = re.compile(r"^(`{3,})\{lab\}\s*(.*)$")


@dataclass(frozen=True)
class Mutation:
    name: str
    chapter: str
    path: str  # relative to ext/atlas/labkit
    old: str
    new: str
    pages: tuple[str, ...]
    bug: str


MUTATIONS: list[Mutation] = [
    # --- parallelism -------------------------------------------------------------------------
    Mutation(
        "ring-no-scale",
        "parallelism",
        "parallel/context.py",
        'scores = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(q.shape[-1])',
        'scores = torch.einsum("qhd,khd->hqk", q, k)',
        ("parallelism/context",),
        "block_attention forgets the 1/sqrt(d) scale (ring and Ulysses use it on every block)",
    ),
    Mutation(
        "ring-strict-mask",
        "parallelism",
        "parallel/context.py",
        "    visible = k_pos[None, :] <= q_pos[:, None]\n",
        "    visible = k_pos[None, :] < q_pos[:, None]\n",
        ("parallelism/context",),
        "block_attention's causal mask hides the diagonal (a query no longer sees itself)",
    ),
    Mutation(
        "ring-balanced-offset",
        "parallelism",
        "parallel/context.py",
        "second = torch.arange((2 * world - 1 - rank) * size, (2 * world - rank) * size)",
        "second = torch.arange((2 * world - 2 - rank) * size, (2 * world - 1 - rank) * size)",
        ("parallelism/context",),
        "the load-balanced split pairs chunk r with chunk 2P-2-r (off by one chunk)",
    ),
    Mutation(
        "zero2-keeps-grads",
        "parallelism",
        "parallel/data.py",
        "            for p in self.params:\n                p.grad = None\n",
        "            pass\n",
        ("parallelism/data",),
        "ZeRO-2 keeps the full gradients after the reduce-scatter (memory of ZeRO-1)",
    ),
    Mutation(
        "zero3-no-regather",
        "parallelism",
        "parallel/data.py",
        "        weight, _ = layer.gather(shard)  # gathered again, as ZeRO-3 does in backward\n",
        "        weight = torch.zeros(layer.out_features, layer.in_features, dtype=shard.dtype)\n",
        ("parallelism/data",),
        "ZeRO-3's backward uses a stale (zeroed) weight instead of gathering it again",
    ),
    Mutation(
        "ledger-zero2-grads",
        "parallelism",
        "parallel/memory.py",
        '"gradients": zero_stage >= 2,',
        '"gradients": zero_stage >= 3,',
        ("parallelism/index", "parallelism/data"),
        "the ledger shards gradients only from stage 3 on",
    ),
    Mutation(
        "activation-34",
        "parallelism",
        "parallel/memory.py",
        "        return sbh * (34 + attn)\n    if sp:",
        "        return sbh * (32 + attn)\n    if sp:",
        ("parallelism/index", "parallelism/tensor"),
        "the activation formula counts 32 s b h instead of 34 s b h",
    ),
    Mutation(
        "rank-groups-slowest-first",
        "parallelism",
        "parallel/memory.py",
        "    for name in names:\n        strides[name] = acc",
        "    for name in reversed(names):\n        strides[name] = acc",
        ("parallelism/index",),
        "rank_groups folds the last dimension fastest instead of the first",
    ),
    Mutation(
        "1f1b-warmup",
        "parallelism",
        "parallel/pipeline.py",
        "warm = min(p - s - 1, total)",
        "warm = min(p - s, total)",
        ("parallelism/pipeline",),
        "1F1B warm-up of p - s forwards instead of p - s - 1",
    ),
    Mutation(
        "moe-capacity-le",
        "parallelism",
        "parallel/expert.py",
        "keep = position < capacity",
        "keep = position <= capacity",
        ("parallelism/expert",),
        "an expert accepts capacity + 1 assignments (<= instead of <)",
    ),
    Mutation(
        "moe-gate-always-renormalized",
        "parallelism",
        "parallel/expert.py",
        '    if gates == "renormalized":\n        top_p = top_p / top_p.sum(-1, keepdim=True)',
        "    if True:\n        top_p = top_p / top_p.sum(-1, keepdim=True)",
        ("parallelism/expert",),
        "raw gates are renormalised anyway (top-1 gates become 1)",
    ),
    Mutation(
        "moe-gate-dropped",
        "parallelism",
        "parallel/expert.py",
        "    if gate is not None:\n        h = h * gate[:, None]",
        "    if gate is None:\n        h = h * gate[:, None]",
        ("parallelism/expert",),
        "the expert forgets to scale its rows by their gates",
    ),
    Mutation(
        "tp-copy-no-allreduce",
        "parallelism",
        "parallel/tensor.py",
        "        return all_reduce(grad, ctx.log), None",
        "        return grad, None",
        ("parallelism/tensor",),
        "f's backward does not all-reduce the input gradient",
    ),
    Mutation(
        "ddp-accumulation-syncs-every-microbatch",
        "parallelism",
        "parallel/data.py",
        "        if not self.sync:  # not the last microbatch of the step: no communication\n"
        "            return\n",
        "",
        ("parallelism/data",),
        "gradient accumulation all-reduces after every microbatch (hooks ignore no_sync)",
    ),
    Mutation(
        "clip-norm-no-allreduce",
        "parallelism",
        "parallel/data.py",
        "    dist.all_reduce(total, group=group)\n    return total.sqrt()[0]",
        "    return total.sqrt()[0]",
        ("parallelism/data",),
        "the global gradient norm uses only this rank's shard",
    ),
    Mutation(
        "hsdp-wrong-mean",
        "parallelism",
        "parallel/data.py",
        "    return shard / dist.get_world_size()",
        "    return shard / n",
        ("parallelism/data",),
        "HSDP averages over the node instead of over every rank",
    ),
    Mutation(
        "hide-bound-no-ring-factor",
        "parallelism",
        "parallel/data.py",
        "    return peak_flops * (2 * grad_bytes) / (4 * link_bytes_per_s)",
        "    return peak_flops * grad_bytes / (4 * link_bytes_per_s)",
        ("parallelism/data",),
        "the overlap bound forgets that a ring all-reduce sends the gradient twice",
    ),
    Mutation(
        "stage-head-on-first",
        "parallelism",
        "parallel/pipeline.py",
        "    flops[-1] += 2 * vocab * hidden",
        "    flops[0] += 2 * vocab * hidden",
        ("parallelism/pipeline",),
        "the output head is charged to the first pipeline stage",
    ),
    Mutation(
        "a2a-ratio-no-combine",
        "parallelism",
        "parallel/expert.py",
        "    comm = (dispatch_bytes + combine_bytes) / link_bytes_per_s",
        "    comm = dispatch_bytes / link_bytes_per_s",
        ("parallelism/expert",),
        "the all-to-all cost forgets the combine",
    ),
    # --- serving -----------------------------------------------------------------------------
    Mutation(
        "prefill-cap-continuous",
        "serving",
        "serving/simulator.py",
        "        seq.scheduled = min(num_tokens, remaining)\n",
        "        seq.scheduled = min(num_tokens, remaining - 1)\n",
        ("serving/journey", "serving/scheduler"),
        "the continuous policy's chunked prefill stops one token short of the budget",
    ),
    Mutation(
        "prefill-cap-chunked",
        "serving",
        "serving/simulator.py",
        "        want = min(seq.num_tokens, budget)\n",
        "        want = min(seq.num_tokens, budget + 1)\n",
        ("serving/scheduler",),
        "the chunked policy lets a waiting prompt's chunk overrun the budget by one token",
    ),
    Mutation(
        "preempt-oldest",
        "serving",
        "serving/simulator.py",
        "            if eng.running:\n                eng.preempt(eng.running.pop())",
        "            if eng.running:\n                eng.preempt(eng.running.popleft())",
        ("serving/scheduler",),
        "preemption evicts the oldest running sequence instead of the newest",
    ),
    Mutation(
        "static-no-padding",
        "serving",
        "serving/simulator.py",
        "        steps = max(s.req.output_len for s in batch)\n",
        "        steps = min(s.req.output_len for s in batch)\n",
        ("serving/scheduler",),
        "a static batch stops at its shortest answer",
    ),
    Mutation(
        "kv-bytes-no-factor-2",
        "serving",
        "serving/models.py",
        "        return 2 * self.num_layers * kv_heads * self.head_dim * self.dtype_bytes",
        "        return self.num_layers * kv_heads * self.head_dim * self.dtype_bytes",
        ("serving/index", "serving/model-runner"),
        "the KV bytes per token count keys but not values",
    ),
    Mutation(
        "ledger-weights-not-split",
        "serving",
        "serving/models.py",
        "    weights = model.weight_bytes() // tp_size\n",
        "    weights = model.weight_bytes()\n",
        ("serving/model-runner",),
        "the ledger charges every tensor-parallel rank the full weights",
    ),
    Mutation(
        "roofline-square-attention",
        "serving",
        "serving/roofline.py",
        "    keys_seen = sum(n * c + n * (n + 1) // 2 for c, n in chunks)",
        "    keys_seen = sum(n * c + n * n for c, n in chunks)",
        ("serving/index",),
        "prefill attention counted over the full square instead of the causal triangle",
    ),
    Mutation(
        "roofline-head-per-token",
        "serving",
        "serving/roofline.py",
        '    rows = len(chunks) if logits == "last" else new_tokens',
        "    rows = new_tokens",
        ("serving/index",),
        "the output head charged for every new token, not once per sequence",
    ),
    Mutation(
        "graph-buckets-no-8",
        "serving",
        "serving/cuda_graphs.py",
        "    return [1, 2, 4, 8] + list(range(16, largest + 1, 16))",
        "    return [1, 2, 4] + list(range(16, largest + 1, 16))",
        ("serving/model-runner",),
        "the CUDA-graph buckets forget the batch size 8",
    ),
    Mutation(
        "cow-skipped",
        "serving",
        "serving/block_allocator.py",
        "        elif self.ref_count[seq.table[-1]] > 1:",
        "        elif self.ref_count[seq.table[-1]] > 2:",
        ("serving/paged-attention",),
        "copy-on-write only when three sequences share a block",
    ),
    Mutation(
        "prefix-last-block-hits",
        "serving",
        "serving/prefix_cache.py",
        "        last_block = (len(tokens) - 1) // self.block_size\n",
        "        last_block = len(tokens) // self.block_size\n",
        ("serving/prefix-caching",),
        "the block holding the last prompt token may hit (no logits would be computed)",
    ),
    Mutation(
        "crossover-no-head",
        "serving",
        "serving/roofline.py",
        "        + 2 * model.vocab_size * model.hidden_size\n        + model.attention_flops_per_key() * keys\n",
        "        + model.attention_flops_per_key() * keys\n",
        ("serving/scheduler",),
        "the crossover batch forgets the output head's FLOPs",
    ),
    Mutation(
        "routing-ignores-cache",
        "serving",
        "serving/routing.py",
        "            r = max(allowed, key=lambda x: (trees[x].match(req.prompt), -load[x], -x))",
        "            r = max(allowed, key=lambda x: (-load[x], -x))",
        ("serving/prefix-caching",),
        "the cache-aware router routes by load alone",
    ),
    Mutation(
        "salt-ignored",
        "serving",
        "serving/prefix_cache.py",
        "        hits: list[int] = []\n        prev = salt",
        "        hits: list[int] = []\n        prev = None",
        ("serving/prefix-caching",),
        "lookups ignore the cache salt (tenants share blocks)",
    ),
    Mutation(
        "transfer-plan-off-by-one",
        "serving",
        "serving/disaggregation.py",
        "            lo, hi = max(i * src, j * dst), min((i + 1) * src, (j + 1) * dst)",
        "            lo, hi = max(i * src, j * dst), min((i + 1) * src, (j + 1) * dst) - 1",
        ("serving/disaggregation",),
        "each transfer drops the last head of its range",
    ),
    Mutation(
        "decode-instance-charges-prefill",
        "serving",
        "serving/disaggregation.py",
        "        if all(n > 1 for _, n in chunks):\n            return 0.0\n",
        "",
        ("serving/disaggregation",),
        "the decode instance recomputes the prompts whose cache it received",
    ),
    Mutation(
        "lora-scale-dropped",
        "serving",
        "serving/lora.py",
        "        y = y.index_add(0, rows, scale * (x[rows] @ a[i].T) @ b[i].T)",
        "        y = y.index_add(0, rows, (x[rows] @ a[i].T) @ b[i].T)",
        ("serving/production",),
        "the LoRA path forgets its scale",
    ),
    Mutation(
        "grammar-digits-unicode",
        "serving",
        "serving/structured.py",
        "    if state in (len(PREFIX), DIGITS) and ch.isdigit() and ch.isascii():",
        "    if state in (len(PREFIX), DIGITS) and ch.isalnum():",
        ("serving/production",),
        "the automaton accepts letters where the pattern wants digits",
    ),
    Mutation(
        "paged-offset",
        "serving",
        "serving/paged_attention.py",
        "    slots = [block_table[p // block_size] * block_size + p % block_size for p in range(start, end)]",
        "    slots = [block_table[p // block_size] * block_size + (p + 1) % block_size"
        " for p in range(start, end)]",
        ("serving/paged-attention",),
        "a token's slot is one position off inside its block",
    ),
    # --- attention ---------------------------------------------------------------------------
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
    # --- moe ---------------------------------------------------------------------------------
    Mutation(
        "router-bias-sign",
        "moe",
        "moe/router.py",
        "    return bias + rate * torch.sign(load.mean() - load)",
        "    return bias + rate * torch.sign(load - load.mean())",
        ("moe/routing",),
        "the loss-free bias update raises the bias of overloaded experts (sign flipped)",
    ),
    Mutation(
        "capacity-q-over-k",
        "moe",
        "moe/capacity.py",
        "    return sum(expected_overflow(tokens, qi, cap) for qi in q) / (k * tokens)",
        "    return sum(expected_overflow(tokens, qi / k, cap) for qi in q) / (k * tokens)",
        ("moe/routing",),
        "the closed-form load is drawn with probability q_i / k instead of q_i",
    ),
    Mutation(
        "grouped-gemm-last-row-expert",
        "moe",
        "moe/grouped_gemm.py",
        "tile, g = a[start : start + block_m], int(m_indices[start])",
        "tile, g = a[start : start + block_m], int(m_indices[start + block_m - 1])",
        ("moe/grouped-gemm",),
        "a tile takes the expert id of its last row instead of its first",
    ),
    # --- hpc ---------------------------------------------------------------------------------
    Mutation(
        "reduce-scatter-adds-into-sent",
        "hpc",
        "hpc/collectives.py",
        "        chunks[into] += incoming\n",
        "        chunks[out] += incoming\n",
        ("hpc/collectives",),
        "ring reduce-scatter adds the incoming chunk into the chunk it is sending",
    ),
    Mutation(
        "ring-time-no-chunk",
        "hpc",
        "hpc/alphabeta.py",
        "    return 2 * (n - 1) * (alpha + size / (n * beta))",
        "    return 2 * (n - 1) * (alpha + size / beta)",
        ("hpc/collectives",),
        "the ring all-reduce time moves the whole buffer each step, not a 1/n chunk",
    ),
    Mutation(
        "daly-sign",
        "hpc",
        "hpc/failures.py",
        "    return math.sqrt(2 * d * m) * (1 + math.sqrt(x) / 3 + x / 9) - d",
        "    return math.sqrt(2 * d * m) * (1 - math.sqrt(x) / 3 + x / 9) - d",
        ("hpc/failures",),
        "Daly's higher-order correction with the wrong sign on its sqrt term",
    ),
    # --- training ----------------------------------------------------------------------------
    Mutation(
        "loss-not-divided-by-microbatches",
        "training",
        "training/loop.py",
        "        scale_loss(loss / n).backward()",
        "        scale_loss(loss).backward()",
        ("training/index",),
        "each microbatch's loss is not divided by the number of microbatches",
    ),
    Mutation(
        "hysteresis-refilled-on-backoff",
        "training",
        "training/mixed.py",
        "                self.scale = max(self.scale * self.backoff_factor, self.min_scale)\n",
        "                self.scale = max(self.scale * self.backoff_factor, self.min_scale)\n"
        "                self.hysteresis_tracker = self.hysteresis\n",
        ("training/mixed-precision",),
        "the loss scaler refills its hysteresis budget on every backoff",
    ),
    Mutation(
        "ckpt-rng-not-restored",
        "training",
        "training/ckpt.py",
        '    torch.set_rng_state(state["rng"]["torch"])\n',
        "",
        ("training/checkpoints",),
        "resume does not restore torch's random state",
    ),
    # --- kernels -----------------------------------------------------------------------------
    Mutation(
        "matmul-no-k-masks",
        "kernels",
        "kernels/matmul.py",
        "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)\n"
        "        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)\n",
        "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M), other=0.0)\n"
        "        b = tl.load(b_ptrs, mask=(offs_n[None, :] < N), other=0.0)\n",
        ("kernels/gemm",),
        "the Triton GEMM drops both K masks (the ragged last K tile reads past the edge)",
    ),
    Mutation(
        "triton-flash-no-alpha",
        "kernels",
        "kernels/flash.py",
        "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)",
        "        acc = acc + tl.dot(p.to(v.dtype), v)",
        ("kernels/attention-kernel",),
        "the Triton attention kernel does not rescale its accumulator by alpha",
    ),
    # --- precision ---------------------------------------------------------------------------
    Mutation(
        "round-half-up",
        "precision",
        "precision/formats.py",
        "        units = torch.round(units)\n",
        "        units = torch.floor(units + 0.5)\n",
        ("precision/formats",),
        "round to nearest breaks ties upward instead of to the even mantissa",
    ),
    Mutation(
        "amax-without-abs",
        "precision",
        "precision/scaling.py",
        "    amax = view.abs().amax(dim=(1, 3), keepdim=True).clamp(min=1e-4)",
        "    amax = view.amax(dim=(1, 3), keepdim=True).clamp(min=1e-4)",
        ("precision/scaling",),
        "the block amax is taken without abs (negative outliers overflow)",
    ),
    # --- speculative -------------------------------------------------------------------------
    Mutation(
        "spec-residual-is-p",
        "speculative",
        "speculative/sampling.py",
        "    fix = torch.where(full, last_p, residual(last_p, last_q))",
        "    fix = last_p",
        ("speculative/acceptance",),
        "after a rejection the replacement is drawn from p instead of the residual",
    ),
    Mutation(
        "tree-position-index",
        "speculative",
        "speculative/tree.py",
        "    return start + torch.tensor(depths(parents), dtype=torch.long)",
        "    return start + torch.arange(len(parents), dtype=torch.long)",
        ("speculative/token-trees",),
        "a tree node's position is its index instead of its depth",
    ),
    Mutation(
        "verify-no-cumprod",
        "speculative",
        "speculative/engine.py",
        "    return match.long().cumprod(dim=1).sum(dim=1)",
        "    return match.long().sum(dim=1)",
        ("speculative/serving",),
        "verification counts every matching draft token, not the accepted prefix",
    ),
    # --- post-training -----------------------------------------------------------------------
    Mutation(
        "grpo-std-population",
        "post-training",
        "post_training/pg.py",
        'correction=1 if std == "unbiased" else 0)',
        "correction=0)",
        ("post-training/policy-gradient",),
        "GRPO's group std always divides by G, whatever the option",
    ),
    Mutation(
        "sft-positions-not-restarted",
        "post-training",
        "post_training/sft.py",
        "    positions = torch.cat([torch.arange(len(s)) for s in seqs])",
        "    positions = torch.arange(sum(len(s) for s in seqs))",
        ("post-training/sft",),
        "packing does not restart positions at each sequence",
    ),
    # --- pytorch -----------------------------------------------------------------------------
    Mutation(
        "slice-offset-no-stride",
        "pytorch",
        "pytorch/layout.py",
        "        return Layout(tuple(sizes), tuple(strides), self.offset + start * self.strides[dim])",
        "        return Layout(tuple(sizes), tuple(strides), self.offset + start)",
        ("pytorch/tensors",),
        "a slice moves the offset by start elements, not start strides",
    ),
    Mutation(
        "rmsnorm-backward-no-mean",
        "pytorch",
        "pytorch/autograd.py",
        "        grad_x = rstd * (gw - x_hat * (gw * x_hat).mean(-1, keepdim=True))",
        "        grad_x = rstd * gw",
        ("pytorch/autograd",),
        "RMSNorm's hand-written backward drops its mean term",
    ),
    Mutation(
        "allocator-first-fit",
        "pytorch",
        "pytorch/allocator.py",
        "        return min(fits, key=lambda b: (b.size, b.address), default=None)",
        "        return min(fits, key=lambda b: b.address, default=None)",
        ("pytorch/allocator",),
        "the caching allocator takes the first free block that fits, not the smallest",
    ),
    # --- profiling ---------------------------------------------------------------------------
    Mutation(
        "replay-ignores-free-completed",
        "profiling",
        "profiling/memory.py",
        '        elif e["action"] == "free_completed":',
        '        elif e["action"] == "free_complete":',
        ("profiling/memory",),
        "the snapshot replay misspells the action and so ignores free_completed (nothing is freed)",
    ),
    Mutation(
        "roofline-verdict-inverted",
        "profiling",
        "profiling/roofline.py",
        '    bound = "memory" if intensity < ridge else "compute"',
        '    bound = "compute" if intensity < ridge else "memory"',
        ("profiling/nsight",),
        "the roofline verdict is inverted (below the ridge called compute-bound)",
    ),
    # --- agents ------------------------------------------------------------------------------
    Mutation(
        "truncate-one-step-fewer",
        "agents",
        "agents/context.py",
        "    protected = units[-keep_last:] if keep_last else []",
        "    protected = units[len(units) - keep_last + 1 :] if keep_last else []",
        ("agents/react",),
        "truncation protects one step fewer than keep_last",
    ),
    Mutation(
        "envpool-round",
        "agents",
        "agents/envpool.py",
        "    return math.ceil(demand_rate(workers, episode) * startup - 1e-9)",
        "    return round(demand_rate(workers, episode) * startup)",
        ("agents/agentenv",),
        "the warm pool size is rounded instead of rounded up",
    ),
    Mutation(
        "trajectory-unanswered-missed",
        "agents",
        "agents/trajectory.py",
        "            missing = [c for c in asked if c not in answered]",
        "            missing = [c for c in answered if c not in asked]",
        ("agents/harness",),
        "the trajectory checker's set difference runs backwards (unanswered calls not reported)",
    ),
    # --- models ------------------------------------------------------------------------------
    Mutation(
        "dsv3-kv-lora-typo",
        "models",
        "registry/models/deepseek.py",
        "            q_heads=128,\n            kv_heads=128,\n            head_dim=192,\n"
        "            q_lora_rank=1536,\n            kv_lora_rank=512,",
        "            q_heads=128,\n            kv_heads=128,\n            head_dim=192,\n"
        "            q_lora_rank=1536,\n            kv_lora_rank=576,",
        ("models/index",),
        "a figure typo in DeepSeek-V3's configuration (kv_lora_rank 576 instead of 512)",
    ),
    Mutation(
        "mla-cache-no-rope-key",
        "models",
        "models/counting.py",
        "        per_layer = (a.kv_lora_rank + a.qk_rope_dim) * nbytes",
        "        per_layer = a.kv_lora_rank * nbytes",
        ("models/counting",),
        "the MLA cache forgets the shared rope key",
    ),
    # --- normalization -----------------------------------------------------------------------
    Mutation(
        "rmsnorm-sums",
        "normalization",
        "normalization/norms.py",
        "    inv_rms = torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + eps)",
        "    inv_rms = torch.rsqrt(x32.pow(2).sum(dim=-1, keepdim=True) + eps)",
        ("normalization/placement",),
        "rms_norm sums the squares instead of averaging them",
    ),
    Mutation(
        "sinkhorn-rows-only",
        "normalization",
        "normalization/stacks.py",
        "        m = m / m.sum(dim=-2, keepdim=True)\n",
        "",
        ("normalization/beyond",),
        "Sinkhorn normalises rows only (the mixing matrix is not doubly stochastic)",
    ),
    # --- multimodal --------------------------------------------------------------------------
    Mutation(
        "merge-not-squared",
        "multimodal",
        "multimodal/tokens.py",
        "    return patches // (merge * merge) + cls",
        "    return patches // merge + cls",
        ("multimodal/index",),
        "image_tokens divides by the merge factor once instead of its square",
    ),
    Mutation(
        "lpt-most-loaded",
        "multimodal",
        "multimodal/packing.py",
        "        r = totals.index(min(totals))",
        "        r = totals.index(max(totals))",
        ("multimodal/systems",),
        "LPT places the next item on the most-loaded rank",
    ),
    Mutation(
        "encoder-cache-by-id",
        "multimodal",
        "multimodal/cache.py",
        "        return hashlib.sha256(image.contiguous().numpy().tobytes()).hexdigest()",
        "        return str(id(image))",
        ("multimodal/systems",),
        "the encoder cache is keyed by object id instead of the pixels' hash",
    ),
    # --- starred, second batch -----------------------------------------------------------------
    Mutation(
        "gptq-error-not-divided",
        "precision",
        "precision/quant.py",
        "            e = (col - q) / ub[i, i]\n",
        "            e = col - q\n",
        ("precision/inference",),
        "GPTQ feeds the raw rounding error forward, not divided by the Cholesky diagonal",
    ),
    Mutation(
        "qkv-split-ungrouped",
        "post-training",
        "post_training/weights.py",
        "        per_group = full.view(s.groups, s.heads // s.groups + 2, s.head_dim, s.hidden)\n"
        "        q, k, v = per_group.split([s.heads // s.groups, 1, 1], dim=1)\n",
        "        q, k, v = full.split([s.heads * s.head_dim, s.groups * s.head_dim,"
        " s.groups * s.head_dim], dim=0)\n",
        ("post-training/weight-sync",),
        "Megatron's fused QKV is split as three contiguous blocks, as if it were not grouped",
    ),
    Mutation(
        "cute-composition-stride-unscaled",
        "kernels",
        "kernels/cute.py",
        "            strided.append((n // rest, r * rest))\n",
        "            strided.append((n // rest, r))\n",
        ("kernels/cute",),
        "composition divides a mode's shape by the stride but leaves its stride unscaled",
    ),
    # --- the rest of the hand-planted list (not starred) ----------------------------------------
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
    Mutation(
        "dispatch-counts-per-expert",
        "moe",
        "moe/dispatch.py",
        '        "tokens_per_rank": in_rank.sum(0),',
        '        "tokens_per_rank": torch.bincount(owner.reshape(-1), minlength=topo.ranks),',
        ("moe/deepep",),
        "the dispatch layout counts a token once per expert on a rank, not once per rank",
    ),
    Mutation(
        "eplb-heaviest-expert",
        "moe",
        "moe/eplb.py",
        "        e = max(range(n), key=lambda i: (load[i] / count[i], -i))",
        "        e = max(range(n), key=lambda i: (load[i], -i))",
        ("moe/production",),
        "EPLB replicates the heaviest expert, not the heaviest per copy",
    ),
    Mutation(
        "gemm-bytes-no-c",
        "hpc",
        "hpc/roofline.py",
        "    return Cost(2.0 * m * n * k, float(elem_bytes * (m * k + k * n + m * n)))",
        "    return Cost(2.0 * m * n * k, float(elem_bytes * (m * k + k * n)))",
        ("hpc/roofline",),
        "the GEMM's compulsory bytes leave out the output C",
    ),
    Mutation(
        "samples-no-overlap",
        "training",
        "training/data.py",
        "        remaining = seq_length  # advance",
        "        remaining = seq_length + 1  # advance",
        ("training/data",),
        "samples are cut without the one-token overlap (a target token is lost per sample)",
    ),
    Mutation(
        "nvfp4-tensor-scale-no-6",
        "precision",
        "precision/fp4.py",
        "    tensor_scale = x.abs().amax().float() / (E4M3.max * E2M1.max)",
        "    tensor_scale = x.abs().amax().float() / E4M3.max",
        ("precision/fp4",),
        "the NVFP4 tensor scale forgets the factor 6 of E2M1's largest value",
    ),
    Mutation(
        "tis-ratio-inverted",
        "post-training",
        "post_training/mismatch.py",
        "    return torch.exp(train_logp - rollout_logp).clamp(clip_low, clip).detach()",
        "    return torch.exp(rollout_logp - train_logp).clamp(clip_low, clip).detach()",
        ("post-training/mismatch",),
        "truncated importance sampling uses the inverted ratio rollout / train",
    ),
    Mutation(
        "reduce-scatter-no-sum",
        "pytorch",
        "pytorch/dist.py",
        "    return list(torch.stack(inputs).sum(0).chunk(len(inputs)))",
        "    return [x.chunk(len(inputs))[r] for r, x in enumerate(inputs)]",
        ("pytorch/distributed",),
        "the reference reduce-scatter hands each rank its own slice, unsummed",
    ),
    Mutation(
        "memory-ignores-distributed-optimizer",
        "training",
        "training/memory.py",
        "bytes_per_param(param_bytes, grad_bytes, lay.dp, lay.distributed_optimizer)",
        "bytes_per_param(param_bytes, grad_bytes, lay.dp)",
        ("training/memory",),
        "the memory ledger ignores the distributed optimizer (optimizer state never sharded)",
    ),
    Mutation(
        "fanout-counts-sender",
        "hpc",
        "hpc/fabric.py",
        "    return (ranks - 1) * (1 - p_none)",
        "    return ranks * (1 - p_none)",
        ("hpc/scale-out",),
        "the expected MoE fan-out counts the sender's own rank as a remote one",
    ),
]


# ---------------------------------------------------------------------------------------------
# Labs of a page, parsed from its source
# ---------------------------------------------------------------------------------------------


def page_labs(docname: str) -> list[dict]:
    """The labs of ``source/<docname>.md`` as the worker wants them (text, options, title)."""
    lines = (SOURCE / f"{docname}.md").read_text(encoding="utf-8").splitlines()
    labs = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, title = match.group(1), match.group(2).strip()
        i += 1
        options: dict[str, str] = {}
        while i < len(lines) and lines[i].startswith(":"):
            key, _, value = lines[i][1:].partition(":")
            options[key.strip()] = value.strip()
            i += 1
        body = []
        while i < len(lines) and lines[i].rstrip() != fence:
            body.append(lines[i])
            i += 1
        labs.append(
            {
                "title": title,
                "text": "\n".join(body).strip("\n") + "\n",
                "needs": options.get("needs", ""),
                "expect_failure": "expect-failure" in options,
                "timeout": float(options.get("timeout", 60)),
                "seed": 0,
                "memory_limit_mb": 0,
                "filename": f"{docname} (lab {len(labs) + 1})",
            }
        )
        i += 1
    return labs


# ---------------------------------------------------------------------------------------------
# Running a page's labs against a labkit tree, in a forked child
# ---------------------------------------------------------------------------------------------


def _child(ext: Path, labs: list[dict], write_fd: int) -> None:
    """Body of the forked child: import atlas from ``ext`` and run the labs in order."""
    for name in [n for n in sys.modules if n == "atlas" or n.startswith("atlas.")]:
        del sys.modules[name]
    sys.path.insert(0, str(ext))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ext), os.environ.get("PYTHONPATH", "")])
    import types

    from atlas.labs.worker import run_lab  # the copy's worker, seeded as in the build

    devnull = os.open(os.devnull, os.O_WRONLY)
    module = types.ModuleType("__lab__")
    sys.modules["__lab__"] = module
    for index, lab in enumerate(labs):
        try:
            status = str(run_lab(index, lab, module.__dict__, devnull).status)  # plain text
        except BaseException as exc:  # noqa: BLE001 - report, never hang the parent
            status = f"crashed ({type(exc).__name__})"
        os.write(write_fd, pickle.dumps((index, status)) + b"\n--\n")
    os._exit(0)


def run_page(ext: Path, labs: list[dict], timeout: float) -> list[str]:
    """Statuses of ``labs`` run against the labkit under ``ext`` (a fork of this process)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_fd)
        try:
            _child(ext, labs, write_fd)
        finally:
            os._exit(1)
    os.close(write_fd)
    statuses = ["crashed"] * len(labs)
    buffer = b""
    done = 0
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            statuses = [
                s if s != "crashed" or i < done else "timeout" for i, s in enumerate(statuses)
            ]
            break
        ready, _, _ = select.select([read_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        buffer += chunk
        while b"\n--\n" in buffer:
            record, buffer = buffer.split(b"\n--\n", 1)
            index, status = pickle.loads(record)
            statuses[index] = status
        done = sum(1 for s in statuses if s != "crashed")
    os.close(read_fd)
    os.waitpid(pid, 0)
    return statuses


def copy_tree(mutation: Mutation | None, where: Path) -> Path:
    """A book root under ``where`` whose ``ext/`` is a copy (patched by ``mutation``) and whose
    other entries link to the repository. Returns the copy's ``ext`` folder."""
    where.mkdir(parents=True, exist_ok=True)
    for entry in ROOT.iterdir():
        if entry.name in ("ext", "_build"):
            continue
        (where / entry.name).symlink_to(entry)
    ext = where / "ext"
    shutil.copytree(ROOT / "ext", ext, ignore=shutil.ignore_patterns("__pycache__"))
    if mutation is not None:
        target = ext / "atlas" / "labkit" / mutation.path
        text = target.read_text(encoding="utf-8")
        count = text.count(mutation.old)
        if count != 1:
            raise SystemExit(
                f"mutation {mutation.name}: the text to replace occurs {count} times in "
                f"ext/atlas/labkit/{mutation.path} (it must occur once); update the mutation"
            )
        target.write_text(text.replace(mutation.old, mutation.new), encoding="utf-8")
    return ext


FINE = {"passed", "xfail"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="run these mutations only")
    parser.add_argument("--chapter", help="run the mutations of this chapter only")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds per page")
    args = parser.parse_args(argv)

    chosen = [
        m
        for m in MUTATIONS
        if (not args.only or m.name in args.only)
        and (not args.chapter or m.chapter == args.chapter)
    ]
    if args.list:
        for m in chosen:
            print(f"{m.name:30s} {m.path:28s} {', '.join(m.pages)}\n{'':30s} {m.bug}")
        return 0
    if not chosen:
        print("no mutation selected", file=sys.stderr)
        return 2

    import numpy  # noqa: F401 - what every lab imports, once, before the forks
    import torch
    import torch.distributed  # noqa: F401

    torch.set_num_threads(1)
    started = time.monotonic()
    pages = sorted({p for m in chosen for p in m.pages})
    # A lab that ``:needs: cuda`` on a machine without it is never started, and a build does not
    # report it (atlas.labs.execute); it can neither pass the baseline nor catch anything here.
    cuda = torch.cuda.is_available()
    labs = {p: [lab for lab in page_labs(p) if cuda or lab["needs"] != "cuda"] for p in pages}

    with tempfile.TemporaryDirectory(prefix="atlas-mutations-") as tmp:
        base_ext = copy_tree(None, Path(tmp) / "baseline")
        baseline = {p: run_page(base_ext, labs[p], args.timeout) for p in pages}
        broken = {p: s for p, s in baseline.items() if any(x not in FINE for x in s)}
        for page, statuses in broken.items():
            bad = [
                f"{labs[page][i]['title']} ({s})" for i, s in enumerate(statuses) if s not in FINE
            ]
            print(f"baseline: {page}: {'; '.join(bad)}", file=sys.stderr)
        if broken:
            print(
                "the unmutated labs do not all pass; fix them first (or make upstreams)",
                file=sys.stderr,
            )
            return 2
        rows = []
        for n, mutation in enumerate(chosen):
            ext = copy_tree(mutation, Path(tmp) / f"m{n}")
            caught = []
            for page in mutation.pages:
                statuses = run_page(ext, labs[page], args.timeout)
                caught += [
                    f"{page}: {labs[page][i]['title']}" + ("" if s == "failed" else f" ({s})")
                    for i, s in enumerate(statuses)
                    if s not in FINE
                ]
            rows.append((mutation, caught))
            shutil.rmtree(ext.parent)

    width = max(len(m.name) for m, _ in rows)
    print(f"{'mutation':{width}s}  caught by")
    print(f"{'-' * width}  {'-' * 60}")
    for mutation, caught in rows:
        first, *rest = caught or ["NOT CAUGHT"]
        print(f"{mutation.name:{width}s}  {first}")
        for line in rest:
            print(f"{'':{width}s}  {line}")
    missed = [m.name for m, caught in rows if not caught]
    elapsed = time.monotonic() - started
    print(
        f"\n{len(rows) - len(missed)} of {len(rows)} mutations caught in {elapsed:.0f} s"
        + (f"; not caught: {', '.join(missed)}" if missed else "")
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
