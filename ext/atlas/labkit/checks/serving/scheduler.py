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
