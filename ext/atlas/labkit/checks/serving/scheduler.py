"""Checks of the labs of ``serving/scheduler.md``.

The chapter's checks: the checks, traces and demos its labs run.
"""

from __future__ import annotations

from atlas.labkit.serving.simulator import SimResult, TraceRequest

ROLE = "check"


def policy_table(
    results: dict[str, SimResult], ttft_slo: float = 1.0, tpot_slo: float = 0.05
) -> str:
    """One row per policy: throughput, TTFT, TPOT, and the requests per second of the run that
    met both objectives (the per-run count, not DistServe's goodput)."""
    head = (
        f"{'policy':<11}{'tok/s':>7}{'TTFT mean':>11}{'TTFT p99':>10}"
        f"{'TPOT mean':>11}{'TPOT p99':>10}{'in SLO/s':>9}"
    )
    lines = [head]
    for name, res in results.items():
        s = res.summary(ttft_slo, tpot_slo)
        lines.append(
            f"{name:<11}{s['throughput_tok_s']:>7}{s['mean_ttft_s']:>10.2f}s{s['p99_ttft_s']:>9.2f}s"
            f"{s['mean_tpot_ms']:>9.1f}ms{s['p99_tpot_ms']:>8.1f}ms{s['goodput_req_s']:>9.2f}"
        )
    return "\n".join(lines)


def unit_steps(chunks: list[tuple[int, int]]) -> float:
    """A cost model in which every step lasts one unit: times become step counts."""
    return 1.0


def static_closed_form(trace: list[TraceRequest], max_num_seqs: int) -> dict[int, tuple[int, int]]:
    """First-token and finish step of every request under static batching, in closed form,
    when all requests arrive at once, the cache holds any batch and each step costs one unit.

    Requests go in batches of ``max_num_seqs`` in order; a batch runs as many steps as its
    longest answer (the first step, the prefill, yields every first token), so batch ``j``
    starts after ``S_j``, the sum of the earlier batches' longest answers. A request of the
    batch gets its first token at ``S_j + 1`` and its last at ``S_j + output_len``.
    """
    times: dict[int, tuple[int, int]] = {}
    start = 0
    ordered = sorted(trace, key=lambda r: r.rid)
    for i in range(0, len(ordered), max_num_seqs):
        batch = ordered[i : i + max_num_seqs]
        for r in batch:
            times[r.rid] = (start + 1, start + r.output_len)
        start += max(r.output_len for r in batch)
    return times


def step_budget_ok(result: SimResult, budget: int, max_num_seqs: int) -> bool:
    """No step schedules more tokens than the budget or more sequences than the limit."""
    return all(
        sum(n for _, n in step.chunks) <= budget and len(step.chunks) <= max_num_seqs
        for step in result.steps
    )


def tokens_conserved(result: SimResult, trace: list[TraceRequest]) -> bool:
    """Without preemption, the steps compute every prompt token once and every generated
    token but the last once (the last is sampled, never fed back)."""
    computed = sum(n for step in result.steps for _, n in step.chunks)
    expected = sum(r.prompt_len + r.output_len - 1 for r in trace)
    return result.preemptions == 0 and computed == expected


def replay_admission(run: object, requests: list, capacity: int) -> dict[str, int]:
    """Replay the step log of ``admission.simulate_admission`` with nothing but the requests'
    lengths: a prefill chunk must recompute the prompt and every token generated before a
    retraction, a decode adds one slot, a retraction frees the request's slots, a request
    leaves when it has generated ``output_len`` tokens. Returns the peak of the slots held
    (which must not exceed ``capacity``), the retractions and the tokens they discarded."""
    by_id = {r.rid: r for r in requests}
    held = {rid: 0 for rid in by_id}
    generated = {rid: 0 for rid in by_id}
    peak = retractions = discarded = 0
    for step in run.steps:  # type: ignore[attr-defined]
        for rid in step.retracted:
            retractions += 1
            discarded += held[rid]
            held[rid] = 0
        for rid, n in step.chunks:
            if step.kind == "prefill":
                assert n == by_id[rid].prompt_len + generated[rid], (rid, n)
                held[rid] = n
            else:
                assert n == 1 and held[rid] > 0, (rid, n)
                held[rid] += 1
        peak = max(peak, sum(held.values()))
        assert peak <= capacity, (peak, capacity)
        for rid, _ in step.chunks:
            generated[rid] += 1
            if generated[rid] == by_id[rid].output_len:
                held[rid] = 0
    assert all(generated[r] == by_id[r].output_len for r in by_id)
    return {"peak": peak, "retractions": retractions, "discarded": discarded}


def chunked_prefill_closed_form(model: object, gpu: object, prompt_len: int, chunk: int) -> dict:
    """The totals of ``chunking.chunked_prefill_cost`` in closed form, for a chunk that
    divides the prompt (``n = L / C`` chunks, the GEMMs in tiles of 128 rows).

    GEMMs: ``n * max(2 P 128 ceil(C / 128) / F, w / W)``. Attention: chunk ``i`` reads
    ``(i + 1) C`` keys and values and scores ``C i C + C (C + 1) / 2`` keys. Its FLOPs per
    byte are ``h / h_kv`` times ``(iC + (C + 1) / 2) / (i + 1)``: lowest at ``i = 0``,
    ``(h / h_kv)(C + 1) / 2``, and always below ``(h / h_kv) C``. If the lowest is above the
    ridge point, every chunk is compute-bound and the attention costs its FLOPs,
    ``a L (L + 1) / 2 / F`` whatever ``C``; if the bound is below it, every chunk is
    memory-bound and costs its reads, ``k L (L + C) / (2 C W)``. The bytes re-read from
    earlier chunks are ``k L (L - C) / (2 C)``.
    """
    L, C = prompt_len, chunk
    if L % C:
        raise ValueError("the closed form needs a chunk that divides the prompt")
    n = L // C
    P, w = model.layer_matmul_params(), model.weight_bytes()  # type: ignore[attr-defined]
    F, W = gpu.peak_flops, gpu.bandwidth  # type: ignore[attr-defined]
    a, k = model.attention_flops_per_key(), model.kv_bytes_per_token()  # type: ignore[attr-defined]
    ratio = a / k  # = h / h_kv for two-byte K and V: FLOPs per byte of one key
    if ratio * (C + 1) / 2 >= gpu.ridge_point:  # type: ignore[attr-defined]
        attention = a * L * (L + 1) / 2 / F
    elif ratio * C <= gpu.ridge_point:  # type: ignore[attr-defined]
        attention = k * L * (L + C) / (2 * C * W)
    else:
        raise ValueError("the chunks of this size are neither all compute- nor all memory-bound")
    return {
        "gemm_s": n * max(2 * P * 128 * -(-C // 128) / F, w / W),
        "attention_s": attention,
        "reread_bytes": k * L * (L - C) // (2 * C),
    }
