"""Unit tests of atlas.labkit.serving: the reference implementations the serving labs run."""

from __future__ import annotations

import math
import sys

import pytest
import torch
from atlas.labkit.checks.common.attention import causal_attention
from atlas.labkit.checks.serving.common import SchedulerConfig, load_scheduler, synthetic_trace
from atlas.labkit.checks.serving.paged_attention import paged_equals_dense, parallel_sampling_demo
from atlas.labkit.checks.serving.prefix_caching import (
    Request,
    chat_trace,
    load_block_manager,
    run_block_cache,
    run_radix_cache,
)
from atlas.labkit.pinned import UpstreamUnavailable
from atlas.labkit.serving.block_allocator import BlockAllocator, OutOfBlocks
from atlas.labkit.serving.models import LLAMA_3_8B, QWEN3_0_6B, kv_ledger
from atlas.labkit.serving.paged_attention import (
    PagedKVCache,
    paged_attention,
    slot_mapping,
    store_kv,
)
from atlas.labkit.serving.prefix_cache import PrefixCache, block_hashes
from atlas.labkit.serving.roofline import H100_SXM, decode_cost, prefill_cost
from atlas.labkit.serving.simulator import EngineLimits, TraceRequest, roofline_cost, simulate
from gitfixtures import FixtureUpstream, make_book, make_repo, stores_dir

# -- models and roofline -------------------------------------------------------------------------


def test_kv_bytes_per_token_from_the_shapes() -> None:
    # 2 (K and V) x layers x KV heads x head_dim x 2 bytes (bf16)
    assert QWEN3_0_6B.kv_bytes_per_token() == 2 * 28 * 8 * 128 * 2 == 114688
    assert LLAMA_3_8B.kv_bytes_per_token() == 131072
    assert LLAMA_3_8B.kv_bytes_per_token(tp_size=2) == 65536
    with pytest.raises(ValueError, match="do not split"):
        LLAMA_3_8B.kv_bytes_per_token(tp_size=3)


def test_parameter_counts_match_the_published_sizes() -> None:
    assert 0.59e9 < QWEN3_0_6B.num_params() < 0.61e9
    assert 8.0e9 < LLAMA_3_8B.num_params() < 8.1e9


def test_ledger_cuts_the_budget_into_whole_blocks() -> None:
    gib = 1024**3
    led = kv_ledger(
        QWEN3_0_6B, 24 * gib, utilization=0.5, block_size=256, activation_peak_bytes=gib
    )
    budget = 12 * gib - QWEN3_0_6B.weight_bytes() - gib
    assert led.bytes_per_block == 114688 * 256
    assert led.num_blocks == budget // led.bytes_per_block
    assert led.cache_bytes <= budget < led.cache_bytes + led.bytes_per_block
    assert led.max_sequences(4096) == led.num_blocks // 16
    assert "blocks" in led.table()
    assert kv_ledger(LLAMA_3_8B, 8 * gib).num_blocks == 0  # the weights alone do not fit


def test_decode_is_memory_bound_and_long_prefill_compute_bound() -> None:
    assert H100_SXM.ridge_point == pytest.approx(295.4, abs=0.1)
    one = decode_cost(LLAMA_3_8B, H100_SXM, batch=1, context_len=0)
    assert one.bound == "memory" and one.intensity == pytest.approx(0.93, abs=0.01)
    long_ctx = decode_cost(LLAMA_3_8B, H100_SXM, batch=256, context_len=4096)
    assert long_ctx.bound == "memory" and long_ctx.intensity < 40
    assert prefill_cost(LLAMA_3_8B, H100_SXM, 2048).bound == "compute"


# -- paged attention -----------------------------------------------------------------------------


@pytest.mark.parametrize("new_tokens", [1, 4])
def test_paged_attention_equals_dense(new_tokens: int) -> None:
    out = paged_equals_dense([3, 9, 16, 17], new_tokens=new_tokens, seed=new_tokens)
    assert out["match"] and out["max_abs_diff"] < 1e-12


def test_paged_attention_with_a_wrong_block_table_differs() -> None:
    gen = torch.Generator().manual_seed(0)
    cache = PagedKVCache.empty(8, 4, 1, 8)
    table = [5, 2, 7]
    k = torch.randn(12, 1, 8, generator=gen, dtype=torch.float64)
    v = torch.randn(12, 1, 8, generator=gen, dtype=torch.float64)
    store_kv(cache, slot_mapping(table, 0, 12, 4), k, v)
    q = torch.randn(1, 2, 8, generator=gen, dtype=torch.float64)
    pos = torch.tensor([11])
    good = paged_attention(q, pos, cache, table, 12)
    assert torch.allclose(good, causal_attention(q, k, v, pos))
    wrong = paged_attention(q, pos, cache, [5, 2, 0], 12)  # block 0 holds nobody's keys
    assert not torch.allclose(wrong, good)


def test_slot_mapping_rejects_positions_past_the_table() -> None:
    assert slot_mapping([3, 1], 2, 6, 4).tolist() == [14, 15, 4, 5]
    with pytest.raises(ValueError, match="more than 2 blocks"):
        slot_mapping([3, 1], 0, 9, 4)


# -- block allocator -----------------------------------------------------------------------------


def test_copy_on_write_only_for_a_shared_partial_block() -> None:
    alloc = BlockAllocator(8, 4)
    a = alloc.allocate(6)  # blocks: full + half
    b = alloc.fork(a)
    assert alloc.num_used == 2
    src, dst = alloc.append_token(a)  # a writes into the shared half block: copy
    assert src == b.table[-1] and dst == a.table[-1] and src != dst
    assert alloc.append_token(b) is None  # b is now the sole owner: writes in place
    alloc.check([a, b])
    alloc.free_seq(a)
    alloc.free_seq(b)
    alloc.check([])
    assert alloc.num_free == 8


def test_allocator_runs_out_and_catches_double_free() -> None:
    alloc = BlockAllocator(2, 4)
    seq = alloc.allocate(8)
    with pytest.raises(OutOfBlocks):
        alloc.append_token(seq)
    alloc.free_seq(seq)
    with pytest.raises(ValueError, match="released more often"):
        alloc._release(0)


def test_parallel_sampling_shares_the_prompt() -> None:
    out = parallel_sampling_demo(prompt_len=10, samples=3, new_tokens=6, block_size=4)
    assert out["readback_ok"] and out["all_free_after"]
    assert out["blocks_after_fork"] == 3 and out["blocks_without_sharing"] == 9
    assert out["copy_on_write_copies"] == 2


# -- prefix cache --------------------------------------------------------------------------------


def test_block_hashes_chain_the_prefix() -> None:
    a = block_hashes([1, 2, 3, 4, 5, 6, 7, 8, 9], 4)
    assert len(a) == 2  # the partial tail block has no hash
    b = block_hashes([0, 2, 3, 4, 5, 6, 7, 8], 4)
    assert a[1] != b[1]  # same second block, different first block


def test_prefix_cache_hits_whole_blocks_but_never_the_last_token() -> None:
    cache = PrefixCache(16, 4)
    prompt = list(range(12))
    table, cached = cache.allocate(prompt)
    assert cached == 0
    cache.commit(table, prompt, 0)
    cache.release(table)
    _, cached = cache.allocate(prompt)  # same 12 tokens: the block of the last one is recomputed
    assert cached == 8
    _, cached = cache.allocate(prompt + [99, 98])
    assert cached == 12


def test_eviction_lowers_the_hit_rate_and_radix_matches_tokens() -> None:
    trace = chat_trace(conversations=6, turns=3, system_len=64, seed=1)
    big = run_block_cache(trace, 4096, 16).hit_rate
    small = run_block_cache(trace, 64, 16).hit_rate
    coarse = run_block_cache(trace, 4096, 64).hit_rate
    radix = run_radix_cache(trace).hit_rate
    assert 0 < small < big < radix <= 1
    assert coarse < big


def test_a_prompt_larger_than_the_pool_is_an_error() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        run_block_cache([Request(list(range(100)), [1, 2])], 4, 16)


# -- scheduler simulator -------------------------------------------------------------------------


def test_continuous_batching_beats_static_on_the_same_trace() -> None:
    trace = synthetic_trace(60, prompt_len=(64, 512), output_len=(8, 128), seed=3)
    cost = roofline_cost(LLAMA_3_8B, H100_SXM)
    limits = EngineLimits(max_num_seqs=16, max_num_batched_tokens=2048, num_blocks=4000)
    results = {p: simulate(trace, p, limits, cost) for p in ("static", "continuous", "chunked")}
    p99 = {p: r.summary()["p99_tpot_ms"] for p, r in results.items()}
    for res in results.values():
        assert res.output_tokens == sum(r.output_len for r in trace)
        assert len(res.ttft) == len(trace)
    assert results["continuous"].throughput > results["static"].throughput
    assert p99["chunked"] < p99["continuous"]


def test_token_budget_chunks_only_the_first_prefill() -> None:
    # 300 = 128 + 128 + 44; the 84 tokens left in the third step do not take request 1 (100
    # tokens): only the first sequence of a step may be chunked
    trace = [TraceRequest(0, 0.0, 300, 2), TraceRequest(1, 0.0, 100, 2)]
    res = simulate(trace, "continuous", EngineLimits(4, 128, 100, 16), lambda c: 1.0)
    kinds = [(s.kind, s.chunks) for s in res.steps]
    assert kinds == [
        ("prefill", ((0, 128),)),
        ("prefill", ((0, 128),)),
        ("prefill", ((0, 44),)),
        ("prefill", ((1, 100),)),
        ("decode", ((0, 1), (1, 1))),
    ]


def test_a_small_pool_forces_preemption_and_every_request_still_finishes() -> None:
    trace = synthetic_trace(20, prompt_len=(20, 60), output_len=(20, 80), seed=5)
    res = simulate(trace, "continuous", EngineLimits(8, 512, 24, 16), lambda c: 0.01)
    assert res.preemptions > 0 and len(res.e2e) == 20


def test_bad_policy_and_oversized_request_are_errors() -> None:
    trace = [TraceRequest(0, 0.0, 100, 10)]
    with pytest.raises(ValueError, match="unknown policy"):
        simulate(trace, "fifo", EngineLimits(), lambda c: 1.0)
    with pytest.raises(ValueError, match="does not fit"):
        simulate(trace, "continuous", EngineLimits(num_blocks=2), lambda c: 1.0)


def test_poisson_arrivals_are_seeded() -> None:
    a = synthetic_trace(5, rate=2.0, seed=1)
    assert a == synthetic_trace(5, rate=2.0, seed=1)
    assert all(x.arrival < y.arrival for x, y in zip(a, a[1:], strict=False))
    assert all(r.arrival == 0 for r in synthetic_trace(3))
    assert math.isinf(float("inf"))


# -- loading nano-vllm's modules from git objects ------------------------------------------------

# Our own minimal modules at nano-vllm's paths: they check that the loader builds the package
# tree, resolves imports between the files and hands back the classes (never nano-vllm code).
FAKE_FILES = {
    "nanovllm/sampling_params.py": "class SamplingParams:\n    max_tokens = 4\n",
    "nanovllm/engine/sequence.py": (
        "from nanovllm.sampling_params import SamplingParams\n"
        "class Sequence:\n    block_size = 8\n    params = SamplingParams\n"
    ),
    "nanovllm/engine/block_manager.py": (
        "from nanovllm.engine.sequence import Sequence\nclass BlockManager:\n    seq = Sequence\n"
    ),
    "nanovllm/engine/scheduler.py": (
        "from nanovllm.config import Config\n"
        "from nanovllm.engine.block_manager import BlockManager\n"
        "class Scheduler:\n    def __init__(self, config: Config):\n"
        "        self.n = config.max_num_seqs\n"
    ),
}


def _fixture_book(tmp_path, files):  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "nano", [files])
    book = make_book(tmp_path / "book", {"README.md": "x\n"}, {"nano-vllm": FixtureUpstream(repo)})
    return repo, book


def test_loader_runs_modules_from_git_objects(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    repo, book = _fixture_book(tmp_path, FAKE_FILES)
    monkeypatch.setenv(
        "ATLAS_UPSTREAMS_ROOT", str(stores_dir(tmp_path / "stores", {"nano-vllm": repo}))
    )
    ns = load_block_manager(book)
    assert ns.label == f"nano-vllm@{repo.head[:7]}"
    assert ns.BlockManager.seq is ns.Sequence and ns.Sequence.params is ns.SamplingParams
    assert "nanovllm" not in sys.modules and "nanovllm.engine.sequence" not in sys.modules
    sched = load_scheduler(book)
    assert sched.Scheduler(SchedulerConfig(max_num_seqs=3)).n == 3


def test_loader_skips_visibly_without_objects(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _, book = _fixture_book(tmp_path, FAKE_FILES)
    monkeypatch.setenv("ATLAS_UPSTREAMS_ROOT", str(tmp_path / "nowhere"))
    with pytest.raises(UpstreamUnavailable, match="make upstreams"):
        load_block_manager(book)


def test_loader_names_a_missing_file(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    files = {k: v for k, v in FAKE_FILES.items() if not k.endswith("block_manager.py")}
    repo, book = _fixture_book(tmp_path, files)
    monkeypatch.setenv(
        "ATLAS_UPSTREAMS_ROOT", str(stores_dir(tmp_path / "stores", {"nano-vllm": repo}))
    )
    with pytest.raises(UpstreamUnavailable, match="block_manager.py"):
        load_block_manager(book)


def test_one_causal_attention_reference_for_every_shape() -> None:
    """The shared reference: grouped heads, default positions (the last queries) and a
    hand-written softmax agree."""
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(2, 4, 8, generator=gen, dtype=torch.float64)
    k = torch.randn(6, 2, 8, generator=gen, dtype=torch.float64)
    v = torch.randn(6, 2, 8, generator=gen, dtype=torch.float64)
    got = causal_attention(q, k, v)
    for i, pos in enumerate((4, 5)):
        for h in range(4):
            scores = (k[: pos + 1, h // 2] @ q[i, h]) / math.sqrt(8)
            want = torch.softmax(scores, 0) @ v[: pos + 1, h // 2]
            assert torch.allclose(got[i, h], want)


def test_unavailable_upstream_is_a_skip_for_runners_that_honour_it() -> None:
    import unittest

    assert issubclass(UpstreamUnavailable, unittest.SkipTest)


@pytest.mark.parametrize("policy", ["continuous", "chunked"])
def test_every_step_respects_the_budget_and_the_sequence_cap(policy: str) -> None:
    trace = synthetic_trace(40, rate=50.0, prompt_len=(10, 400), output_len=(1, 60), seed=7)
    limits = EngineLimits(max_num_seqs=6, max_num_batched_tokens=256, num_blocks=80)
    res = simulate(trace, policy, limits, lambda c: 0.005)
    for step in res.steps:
        assert sum(n for _, n in step.chunks) <= limits.max_num_batched_tokens
        assert len(step.chunks) <= limits.max_num_seqs
        assert all(n > 0 for _, n in step.chunks)
    assert res.output_tokens == sum(r.output_len for r in trace)
    starts = [s.start for s in res.steps]
    assert starts == sorted(starts)


def test_step_flops_equal_the_flop_counter() -> None:
    from atlas.labkit.checks.serving.index import TINY, measured_step_flops
    from atlas.labkit.serving.roofline import step_cost

    for chunks in ([(0, 1)], [(4, 1)] * 2, [(0, 6)], [(8, 3), (2, 1)]):
        assert measured_step_flops(TINY, chunks) == step_cost(TINY, H100_SXM, chunks).flops


def test_static_and_chunked_policies_meet_their_closed_forms() -> None:
    from atlas.labkit.checks.serving.common import chunked_ttft_closed_form, synthetic_trace
    from atlas.labkit.checks.serving.scheduler import (
        static_closed_form,
        tokens_conserved,
        unit_steps,
    )

    trace = synthetic_trace(30, prompt_len=(10, 100), output_len=(1, 20), seed=5)
    limits = EngineLimits(max_num_seqs=4, max_num_batched_tokens=128, num_blocks=10**5)
    run = simulate(trace, "static", limits, unit_steps)
    for rid, (first, last) in static_closed_form(trace, 4).items():
        assert run.ttft[rid] == first and run.e2e[rid] == last
    for policy in ("continuous", "chunked"):
        assert tokens_conserved(simulate(trace, policy, limits, unit_steps), trace)
    for prompt, budget, decoding in [(1000, 128, 2), (129, 128, 0)]:
        t = [TraceRequest(i, 0.0, 1, 40) for i in range(decoding)]
        t.append(TraceRequest(decoding, 1.0, prompt, 2))
        got = simulate(t, "chunked", EngineLimits(64, budget, 10**6), unit_steps).ttft[decoding]
        assert got == chunked_ttft_closed_form(prompt, budget, decoding)


def test_block_cache_equals_the_radix_closed_form() -> None:
    from atlas.labkit.checks.serving.prefix_caching import (
        block_hits_closed_form,
        chat_trace,
        run_block_cache,
    )

    trace = chat_trace(conversations=6, turns=3, system_prompts=2, system_len=100, seed=1)
    for b in (16, 64):
        assert run_block_cache(trace, 10**5 // b, b).per_request == block_hits_closed_form(trace, b)


def test_allocator_slots_and_copy_on_write_closed_forms() -> None:
    from atlas.labkit.checks.serving.common import synthetic_trace
    from atlas.labkit.checks.serving.paged_attention import (
        cow_closed_form,
        paged_slots,
        parallel_sampling_demo,
    )

    trace = synthetic_trace(20, seed=2)
    assert paged_slots(trace, 16) == sum(
        -(-(r.prompt_len + r.output_len) // 16) * 16 for r in trace
    )
    for case in [(10, 3, 6, 4), (8, 2, 9, 4), (3, 4, 2, 8)]:
        assert cow_closed_form(*case).items() <= parallel_sampling_demo(*case).items()


def test_graph_buckets_and_padding() -> None:
    from atlas.labkit.serving.cuda_graphs import graph_batch_sizes, padding, replay_size

    sizes = graph_batch_sizes(512)
    assert len(sizes) == 36 and sizes[:5] == [1, 2, 4, 8, 16]
    assert replay_size(513, sizes) is None and replay_size(33, graph_batch_sizes(40)) is None
    assert max(padding(b, sizes) for b in range(1, 513)) == 15


def test_nanovllm_runner_agrees_when_objects_are_present() -> None:
    from atlas.labkit.checks.serving import model_runner as nv_runner
    from atlas.labkit.serving.cuda_graphs import graph_batch_sizes, replay_size

    try:
        ns = nv_runner.load_model_runner()
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    for tp in (1, 4):
        led = kv_ledger(LLAMA_3_8B, H100_SXM.memory_bytes, block_size=16, tp_size=tp)
        got = nv_runner.nanovllm_kv_blocks(
            ns,
            LLAMA_3_8B,
            gpu_bytes=H100_SXM.memory_bytes,
            weight_bytes=LLAMA_3_8B.weight_bytes() // tp,
            block_size=16,
            tp_size=tp,
        )
        assert got["num_blocks"] == led.num_blocks and got["cache_bytes"] == led.cache_bytes
    sizes, chosen = nv_runner.nanovllm_graph_buckets(ns, QWEN3_0_6B, 64, list(range(1, 65)))
    assert sizes == graph_batch_sizes(64)
    assert chosen == [replay_size(b, sizes) for b in range(1, 65)]


def test_nanovllm_scheduler_without_prefix_cache_equals_the_simulator() -> None:
    from atlas.labkit.checks.serving import common as nv
    from atlas.labkit.checks.serving.common import synthetic_trace
    from atlas.labkit.checks.serving.scheduler import unit_steps

    try:
        ns = nv.load_scheduler()
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    trace = synthetic_trace(30, prompt_len=(100, 1200), output_len=(20, 200), seed=4)
    config = nv.SchedulerConfig(
        max_num_seqs=8, max_num_batched_tokens=2048, kvcache_block_size=256, num_kvcache_blocks=20
    )
    victims: list[tuple[int, int]] = []
    theirs = nv.schedule_steps(ns, trace, config, prefix_cache=False, preempted=victims)
    ours = simulate(trace, "continuous", EngineLimits(8, 2048, 20, 256), unit_steps)
    assert [(s.kind, s.chunks) for s in ours.steps] == theirs
    assert ours.preempted == victims and victims


def test_cache_aware_routing_keeps_the_single_replica_hits() -> None:
    from atlas.labkit.checks.serving.prefix_caching import chat_trace, routed_hits, run_block_cache
    from atlas.labkit.serving.routing import route

    trace = chat_trace(conversations=9, turns=3, system_prompts=2, system_len=64, seed=3)
    one = run_block_cache(trace, 10**5, 16).cached_tokens
    assert routed_hits(trace, 3, "cache-aware")[0] == one
    assert routed_hits(trace, 3, "round-robin")[0] <= one
    with pytest.raises(ValueError, match="policy"):
        route(trace, 2, "random")


def test_salted_chains_share_nothing() -> None:
    from atlas.labkit.checks.serving.prefix_caching import Request, run_block_cache

    same = [Request(list(range(40)), [1, 2])] * 2
    assert run_block_cache(same, 100, 16, salts=[1, 2]).per_request == (0, 0)
    assert run_block_cache(same, 100, 16, salts=[5, 5]).per_request == (0, 32)


def test_relayout_and_transfer_plan() -> None:
    from atlas.labkit.checks.serving.disaggregation import relayout_matches_dense
    from atlas.labkit.serving.disaggregation import transfer_plan

    assert transfer_plan(8, 4, 2) == [
        (0, 0, range(0, 2)),
        (1, 0, range(2, 4)),
        (2, 1, range(4, 6)),
        (3, 1, range(6, 8)),
    ]
    assert relayout_matches_dense([3, 9], tp_prefill=2, tp_decode=4)["match"]
    with pytest.raises(ValueError, match="do not split"):
        transfer_plan(8, 3, 2)


def test_disaggregated_latencies_at_zero_load() -> None:
    from atlas.labkit.checks.serving.disaggregation import disaggregated_latencies
    from atlas.labkit.serving.roofline import step_cost

    cost = roofline_cost(LLAMA_3_8B, H100_SXM)
    limits = EngineLimits(64, 4096, 10**5, 16)
    kv, link = LLAMA_3_8B.kv_bytes_per_token(), 50e9
    ttft, tpot = disaggregated_latencies(
        [TraceRequest(0, 0.0, 500, 10)], limits, limits, cost, kv, link
    )
    assert ttft[0] == step_cost(LLAMA_3_8B, H100_SXM, [(0, 500)]).time_s
    steps = sum(step_cost(LLAMA_3_8B, H100_SXM, [(500 + i, 1)]).time_s for i in range(9))
    assert tpot[0] == pytest.approx((500 * kv / link + steps) / 9, rel=1e-12)


def test_lora_and_structured_output() -> None:
    from atlas.labkit.checks.serving.production import constrained_samples, lora_matches_merged
    from atlas.labkit.serving.lora import lora_flops_overhead
    from atlas.labkit.serving.structured import DEAD, FINAL, read

    r = lora_matches_merged(h_in=16, h_out=24, rank=2)
    assert r["match"] and r["overhead"] == pytest.approx(lora_flops_overhead(16, 24, 2))
    assert read(0, '{"n": 12}') == FINAL and read(0, '{"n": x') == DEAD
    c = constrained_samples(count=30, seed=1)
    assert c["all_match"] and c["unmasked_match"] == 0


def test_crossover_and_preemption_costs() -> None:
    from atlas.labkit.serving.roofline import (
        crossover_batch,
        crossover_context,
        recompute_seconds,
        swap_seconds,
    )

    b = math.ceil(crossover_batch(LLAMA_3_8B, H100_SXM, 0))
    assert decode_cost(LLAMA_3_8B, H100_SXM, b, 0).bound == "compute"
    assert decode_cost(LLAMA_3_8B, H100_SXM, b - 1, 0).bound == "memory"
    assert (
        crossover_batch(LLAMA_3_8B, H100_SXM, math.ceil(crossover_context(LLAMA_3_8B, H100_SXM)))
        is None
    )
    assert (
        recompute_seconds(LLAMA_3_8B, H100_SXM, 1000)
        == prefill_cost(LLAMA_3_8B, H100_SXM, 1000).time_s
    )
    assert swap_seconds(LLAMA_3_8B, 10, 1e9) == 20 * LLAMA_3_8B.kv_bytes_per_token() / 1e9
