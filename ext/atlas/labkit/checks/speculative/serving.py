"""Checks of the labs of ``speculative/serving.md``.

The chapter's checks: seeded distributions, Monte Carlo estimates and their bounds, the plain
decoding reference, and upstream functions run from their source at the pins (EAGLE's
verification and tree buffers, Megatron-LM's verification and KV rewind).
"""

from __future__ import annotations

import random
from typing import Any

import torch

from atlas.labkit.pinned import definitions

ROLE = "check"


def megatron_mtp_utils() -> dict[str, Any]:
    """``verify_speculative_tokens`` and ``rewind_kv_cache`` from Megatron-LM at the pin."""
    return definitions(
        "megatron",
        "megatron/core/inference/text_generation_controllers/mtp_utils_pytorch.py",
        ("verify_speculative_tokens", "rewind_kv_cache"),
        {"torch": torch},
    )


def megatron_verify_agrees(batch: int, gamma: int, vocab: int, trials: int, seed: int = 0) -> bool:
    """On random batches where drafts often match, our :func:`verify_batch` and Megatron's
    ``verify_speculative_tokens`` (decode requests only) accept the same number per request."""
    from atlas.labkit.speculative.engine import verify_batch

    fn = megatron_mtp_utils()["verify_speculative_tokens"]
    g = torch.Generator().manual_seed(seed)
    for _ in range(trials):
        outputs = torch.randint(vocab, (batch, gamma + 1), generator=g)
        inputs = torch.randint(vocab, (batch, gamma + 1), generator=g)
        copy_mask = torch.rand(batch, gamma, generator=g) < 0.7
        inputs[:, 1:] = torch.where(copy_mask, outputs[:, :-1], inputs[:, 1:])
        last, _mask, _ = fn(inputs.reshape(-1), outputs.reshape(-1), batch, 0, gamma)
        theirs = last - torch.arange(batch) * (gamma + 1)
        if not torch.equal(theirs, verify_batch(inputs, outputs)):
            return False
    return True


def paged_writes_fit(
    requests: int, gamma: int, block_size: int, steps: int, seed: int = 0
) -> dict[str, int]:
    """Replay random speculative steps through :class:`BlockPool` and place every token by
    hand, independently of its block arithmetic.

    Each step reserves ``gamma + 1`` tokens (a prefill chunk of random length at first), writes
    each one at its slot (block ``p // block_size`` of the request's table, offset
    ``p % block_size``: the paged layout itself), then rewinds a random number of rejected
    drafts. Counted at every write and after every step: tokens whose block is missing from
    the table (``unplaced``), blocks in a table that hold no live token (``empty_blocks``),
    blocks that two requests own at once (``shared``) and blocks the pool lost or duplicated
    (``leaked``).
    """
    from atlas.labkit.speculative.engine import BlockPool, PagedRequest

    g = random.Random(seed)
    total = requests * (steps * (gamma + 1) + 8 * block_size) // block_size + 8
    pool = BlockPool(block_size, free=list(range(total)))
    g.shuffle(pool.free)
    reqs = [PagedRequest(blocks=[], length=0) for _ in range(requests)]
    counts = {"tokens": 0, "unplaced": 0, "empty_blocks": 0, "shared": 0, "leaked": 0}
    for step in range(steps):
        for req in reqs:
            start = req.length
            new = g.randint(1, 3 * block_size + 1) if step == 0 else gamma + 1
            pool.reserve(req, new)
            for p in range(start, start + new):
                counts["tokens"] += 1
                counts["unplaced"] += p // block_size >= len(req.blocks)
            if step:
                pool.rewind(req, g.randint(0, gamma))  # rejected drafts of this step
        owner: dict[int, int] = {}
        for i, req in enumerate(reqs):
            live = {p // block_size for p in range(req.length)}  # blocks the kept tokens need
            counts["empty_blocks"] += sum(j not in live for j in range(len(req.blocks)))
            kept = range(req.length)  # a rewind must leave every kept token its block
            counts["unplaced"] += sum(p // block_size >= len(req.blocks) for p in kept)
            for j in live & set(range(len(req.blocks))):
                counts["shared"] += owner.setdefault(req.blocks[j], i) != i
        held = [b for req in reqs for b in req.blocks] + pool.free
        counts["leaked"] += len(held) != total or len(set(held)) != total
    return counts


def megatron_rewind_agrees(
    requests: int, gamma: int, block_size: int, trials: int, seed: int = 0
) -> dict[str, int]:
    """Random paged states after a step of ``gamma + 1`` tokens per request; rewind them with
    our :class:`BlockPool` and with Megatron's ``rewind_kv_cache`` and compare lengths, last
    offsets, block counts, last block ids, the cleared table entries and the released blocks.
    Returns counts of cases and of disagreements."""
    from atlas.labkit.speculative.engine import BlockPool, PagedRequest

    fn = megatron_mtp_utils()["rewind_kv_cache"]
    g = random.Random(seed)
    cases = released_total = bad = 0
    for _ in range(trials):
        pool = BlockPool(block_size, free=list(range(1000)))
        g.shuffle(pool.free)
        reqs, accepted, prefill = [], [], []
        for _ in range(requests):
            req = PagedRequest(blocks=[], length=0)
            pool.reserve(req, g.randint(1, 5 * block_size))  # the context before the step
            is_prefill = g.random() < 0.2
            pool.reserve(req, 1 if is_prefill else gamma + 1)  # this step's tokens
            reqs.append(req)
            prefill.append(int(is_prefill))
            accepted.append(0 if is_prefill else g.randint(0, gamma))
        width = max(len(r.blocks) for r in reqs) + 1
        table = torch.full((requests, width), -1, dtype=torch.long)
        for i, r in enumerate(reqs):
            table[i, : len(r.blocks)] = torch.tensor(r.blocks)
        state = dict(
            accepted_counts=torch.tensor(accepted),
            prefill_status=torch.tensor(prefill),
            last_kv_block_offset=torch.tensor([(r.length - 1) % block_size for r in reqs]),
            kv_length_offsets=torch.tensor([r.length for r in reqs]),
            kv_block_counts=torch.tensor([len(r.blocks) for r in reqs]),
            last_kv_block_id=torch.tensor([r.blocks[-1] for r in reqs]),
            kv_block_ids=table,
        )
        released, remove = fn(**state, num_speculative_tokens=gamma, block_size_tokens=block_size)
        for i, r in enumerate(reqs):
            cases += 1
            rejected = 0 if prefill[i] else gamma - accepted[i]
            ours = pool.rewind(r, rejected)
            released_total += len(ours)
            theirs = [int(released[i])] if bool(remove[i]) else []
            row = table[i].tolist()
            same = (
                ours == theirs
                and int(state["kv_length_offsets"][i]) == r.length
                and int(state["last_kv_block_offset"][i]) == (r.length - 1) % block_size
                and int(state["kv_block_counts"][i]) == len(r.blocks)
                and int(state["last_kv_block_id"][i]) == r.blocks[-1]
                and row[: len(r.blocks)] == r.blocks
                and all(x == -1 for x in row[len(r.blocks) :])
            )
            bad += not same
    return {"cases": cases, "blocks_released": released_total, "disagreements": bad}


def timed_verify_ratio(
    batch: int, gamma: int, d_in: int = 4096, d_out: int = 14336, iters: int = 50
) -> float:
    """Measured time of one weight matrix applied to ``batch * (gamma + 1)`` tokens (a
    verification pass) over its time for ``batch`` tokens (a plain decode step), on the GPU,
    timed with CUDA events. The default shape is Llama 3.1 8B's MLP up-projection, so the
    ratio is what the roofline of ``serving.md`` predicts for the step's largest matmuls: about
    one while the weight's bytes dominate, about ``gamma + 1`` once the FLOPs do. A measured
    reference, independent of the roofline it is compared with."""
    w = torch.randn(d_out, d_in, device="cuda", dtype=torch.bfloat16)

    def seconds(tokens: int) -> float:
        x = torch.randn(tokens, d_in, device="cuda", dtype=torch.bfloat16)
        for _ in range(5):
            torch.nn.functional.linear(x, w)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            torch.nn.functional.linear(x, w)
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / iters

    return seconds(batch * (gamma + 1)) / seconds(batch)


def simulated_weights_only_speedup(
    n_params: float,
    peak_flops: float,
    bandwidth: float,
    batch: int,
    gamma: int,
    alpha: float,
    steps: int = 2000,
    seed: int = 0,
) -> float:
    """Speed-up of speculation at one batch size by a step-by-step simulation: each step, every
    sequence's drafts are kept one by one with probability ``alpha`` until the first rejection
    (drawn), and the step is charged the time of its FLOPs or of its weight bytes, whichever is
    longer, counted directly (``2 N`` FLOPs per token, ``2 N`` bytes of BF16 weights per step),
    with a free draft. Plain decoding is charged the same way for one token per sequence."""
    g = torch.Generator().manual_seed(seed)
    keep = torch.rand(steps, batch, gamma, generator=g) < alpha
    tokens = float((keep.long().cumprod(-1).sum(-1) + 1).sum())

    def step_time(tokens_in_step: int) -> float:
        return max(2 * n_params * tokens_in_step / peak_flops, 2 * n_params / bandwidth)

    spec_time = steps * step_time(batch * (gamma + 1))
    plain_time_per_token = step_time(batch) / batch
    return tokens / spec_time * plain_time_per_token


def simulated_crossover(n_params, peak_flops, bandwidth, gamma, alpha, steps=500) -> int:
    """The first batch at which the simulated speed-up falls below 1: doubling, then
    bisection (the simulated speed-up falls with the batch once verification is
    compute-bound; each batch draws its own acceptances, so the search sees the noise of
    ``steps`` steps)."""

    def pays(b: int) -> bool:
        return (
            simulated_weights_only_speedup(n_params, peak_flops, bandwidth, b, gamma, alpha, steps)
            >= 1
        )

    hi = 1
    while pays(hi):
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if pays(mid) else (lo, mid)
    return hi
