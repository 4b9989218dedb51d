"""atlas.labkit.training: the training chapter's taught code, checked without Sphinx.

Each test asserts one claim a page makes, against something independent of the code: a dense
or uninterrupted run, PyTorch's own implementation, a closed form, or Megatron-LM's function at
the pin (those skip where the upstream objects are absent). Negative tests break one piece (the
random state of a recomputation, the data position of a resume) and check that the comparison
notices.
"""

from __future__ import annotations

import copy
import math
import os
import random

import numpy
import pytest
import torch
from atlas.labkit import run_ranks
from atlas.labkit.checks.training.checkpoints import (
    load_at_tp,
    resume_run,
    save_at_tp,
    sharded_metadata_matches,
)
from atlas.labkit.checks.training.common import SavedBytes, tensor_bytes
from atlas.labkit.checks.training.data import (
    megatron_gpt_indices,
    megatron_indexed,
    megatron_sampler,
)
from atlas.labkit.checks.training.index import megatron_flops
from atlas.labkit.checks.training.memory import megatron_memory, small_config_bytes
from atlas.labkit.checks.training.mixed_precision import (
    clip_matches_torch,
    megatron_grad_scaler,
    megatron_param_ranges,
)
from atlas.labkit.checks.training.stability import megatron_spike_test
from atlas.labkit.registry.models import model
from atlas.labkit.training import ckpt, data, flops, loop, memory, mixed, recompute, stability

# ---------------------------------------------------------------------------------------------
# loop and flops
# ---------------------------------------------------------------------------------------------


def _tiny() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)
    ).double()


def test_accumulated_microbatches_equal_one_batch():
    x, y = torch.randn(32, 8, dtype=torch.float64), torch.randn(32, 1, dtype=torch.float64)
    a, w = _tiny(), _tiny()
    oa = torch.optim.SGD(a.parameters(), lr=0.1, momentum=0.9)
    ow = torch.optim.SGD(w.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        loop.train_step(
            a, oa, list(zip(x.chunk(4), y.chunk(4), strict=True)), torch.nn.functional.mse_loss
        )
        ow.zero_grad()
        torch.nn.functional.mse_loss(w(x), y).backward()
        ow.step()
    assert all(
        torch.allclose(p, q, rtol=0, atol=1e-12)
        for p, q in zip(a.parameters(), w.parameters(), strict=True)
    )


def test_flops_terms_and_six_n():
    m = model("llama-3.1-8b")
    f = flops.training_flops(m, 8192, 2)
    assert f["total"] == f["gemm"] + f["attention"] + f["logits"]
    # 6N counts the matrices and the head but not the attention products
    assert flops.six_n_flops(m, 2 * 8192) == pytest.approx(f["gemm"] + f["logits"], rel=1e-4)
    assert flops.mfu(1e12, 1000, 2, 1e15) == 0.5


def test_flops_equal_megatron():
    m = model("llama-3.1-70b")
    assert flops.training_flops(m, 4096, 3)["total"] == megatron_flops(m, 4096, 3)


# ---------------------------------------------------------------------------------------------
# mixed precision
# ---------------------------------------------------------------------------------------------


def test_scaler_hand_trace():
    s = mixed.DynamicLossScaler(initial_scale=1024.0, growth_interval=3, hysteresis=2)
    seen = []
    for f in [True, True, True, False, False, False, True, False]:
        s.update(f)
        seen.append(int(s.scale))
    assert seen == [1024, 512, 256, 256, 256, 512, 512, 512]


def test_scaler_equals_megatron():
    theirs = megatron_grad_scaler()(2.0**16, 1.0, 2.0, 0.5, 7, 3)
    ours = mixed.DynamicLossScaler(2.0**16, 1.0, 2.0, 0.5, 7, 3)
    rng = random.Random(1)
    for _ in range(300):
        f = rng.random() < 0.1
        ours.update(f)
        theirs.update(f)
        assert ours.scale == theirs.scale.item()


def test_main_params_equal_fp32_adam_and_bytes_are_18():
    torch.manual_seed(0)
    c = torch.randn(100).bfloat16()
    w = torch.nn.Parameter(torch.ones(100, dtype=torch.bfloat16))
    ref = torch.nn.Parameter(torch.ones(100))
    opt = mixed.MixedPrecisionAdam([w], lr=1e-3, clip_grad=0.0)
    ref_opt = torch.optim.AdamW([ref], lr=1e-3, betas=(0.9, 0.95), weight_decay=0.0)
    for _ in range(20):
        opt.zero_grad()
        (w * c).sum().backward()
        opt.step()
        ref_opt.zero_grad()
        (ref * c.float()).sum().backward()
        ref_opt.step()
    assert torch.equal(opt.main_params[0], ref.detach())
    held = sum(tensor_bytes(v) for v in opt.state_tensors().values())
    assert held == 100 * mixed.bytes_per_param(2, 4) == 1800


def test_overflow_skips_the_step():
    w = torch.nn.Parameter(torch.ones(4, dtype=torch.float16))
    opt = mixed.MixedPrecisionAdam([w], scaler=mixed.DynamicLossScaler(initial_scale=2.0**15))
    opt.zero_grad()
    opt.scale_loss((w * 1e4).sum()).backward()  # 1e4 * 2^15 overflows fp16
    applied, norm = opt.step()
    assert (applied, norm) == (False, None) and torch.equal(
        w.detach(), torch.ones(4, dtype=torch.float16)
    )


def test_bytes_per_param_table():
    assert [mixed.bytes_per_param(p, g) for p, g in ((2, 4), (2, 2), (4, 4))] == [18, 20, 16]
    assert mixed.bytes_per_param(2, 4, 4, True) == 6 + 12 / 4


def test_shard_ranges_cover_each_element_once_and_equal_megatron():
    numels = [10, 7, 30, 3, 14, 200]
    for dp in (2, 3, 4):
        owner = [numpy.zeros(n, dtype=int) for n in numels]  # per parameter, per element
        for r in range(dp):
            (lo, hi), ranges = mixed.shard_ranges(numels, dp, r)
            for i, pr in enumerate(ranges):
                if pr is not None:
                    owner[i][pr.param[0] : pr.param[1]] += 1
            theirs = megatron_param_ranges(numels, dp, r)
            for o, t in zip(ranges, theirs, strict=True):
                assert (o is None and t is None) or (o.world, o.local, o.param) == (
                    t["gbuf_world"],
                    t["gbuf_local"],
                    t["param"],
                )
        assert all((o == 1).all() for o in owner)


def test_clip_over_two_ranks_equals_torch():
    ranks = run_ranks(clip_matches_torch, 2, 5, 1.0)
    assert all(r["norm_matches"] and r["clipped_matches"] for r in ranks)


# ---------------------------------------------------------------------------------------------
# recomputation and offload
# ---------------------------------------------------------------------------------------------


def _run(mode, chunk=1, offload=False):
    stack = recompute.build_stack(4, 32, 4, mode)
    torch.manual_seed(1)
    x = torch.randn(16, 2, 32, dtype=torch.bfloat16, requires_grad=True)
    torch.manual_seed(2)
    ctx = (
        recompute.OffloadSavedTensors(params=tuple(stack.parameters()))
        if offload
        else SavedBytes(stack.parameters())
    )
    with ctx:
        y = recompute.stack_forward(stack, x, mode, chunk=chunk)
    y.float().pow(2).sum().backward()
    return y.detach(), x.grad, [p.grad for p in stack.parameters()], ctx


@pytest.mark.parametrize("mode,chunk", [(None, 1), ("selective", 1), ("full", 1), ("full", 3)])
def test_saved_bytes_equal_formula(mode, chunk):
    *_, saved = _run(mode, chunk)
    assert saved.total == recompute.activation_bytes(16, 2, 32, 4, 4, mode, chunk)["total"]


@pytest.mark.parametrize("mode", ["selective", "full"])
def test_recomputed_equals_plain(mode):
    plain, again = _run(None), _run(mode, 2)
    assert torch.equal(plain[0], again[0]) and torch.equal(plain[1], again[1])
    assert all(map(torch.equal, plain[2], again[2]))


def test_recompute_without_rng_restore_differs(monkeypatch):
    # replaying dropout from another random state gives the gradients of another network
    monkeypatch.setattr(torch, "set_rng_state", lambda state: None)
    plain, broken = _run(None), _run("selective")
    assert torch.equal(plain[0], broken[0])  # the forward pass is unchanged
    assert not all(map(torch.equal, plain[2], broken[2]))


def test_offload_moves_the_saved_bytes_and_keeps_gradients():
    plain, off = _run(None), _run(None, offload=True)
    assert (
        off[3].moved
        == off[3].returned
        == recompute.activation_bytes(16, 2, 32, 4, 4, None)["total"]
    )
    assert all(map(torch.equal, plain[2], off[2]))


# ---------------------------------------------------------------------------------------------
# checkpoints
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("use_async", [False, True])
def test_save_tp2_load_tp4_and_tp1(tmp_path, use_async):
    run_ranks(save_at_tp, 2, str(tmp_path), 3, use_async)
    for tp in (4, 1):
        loaded = run_ranks(load_at_tp, tp, str(tmp_path), 3)
        assert all(r["slices_equal"] and r["output_matches_dense"] for r in loaded)


def test_incomplete_checkpoint_is_rejected(tmp_path):
    t = torch.zeros(4, 4)
    shards = [ckpt.ShardedTensor.from_rank_offsets("w", t, (0, 0, 1))]
    ckpt.save_sharded(shards, str(tmp_path), 0)  # no finalize: no metadata
    with pytest.raises(FileNotFoundError):
        ckpt.load_sharded(shards[0].without_data(), str(tmp_path))


def test_sharded_metadata_equals_megatron():
    assert all(sharded_metadata_matches(2)) and all(sharded_metadata_matches(4))


def test_resume_is_exact_and_needs_rng_and_position():
    full = resume_run(8)
    stopped = resume_run(8, stop_at=3)
    assert torch.equal(resume_run(8, state=stopped["state"])["params"], full["params"])
    bad = copy.deepcopy(stopped["state"])
    bad["consumed_samples"] = 0
    assert not torch.equal(resume_run(8, state=bad)["params"], full["params"])
    bad = copy.deepcopy(stopped["state"])
    bad["rng"]["torch"] = torch.Generator().manual_seed(7).get_state()
    assert not torch.equal(resume_run(8, state=bad)["params"], full["params"])


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path):
    rng = numpy.random.RandomState(0)
    docs = [rng.randint(0, 60000, size=rng.randint(3, 40)).tolist() for _ in range(40)]
    prefix = str(tmp_path / "c")
    data.write_indexed(prefix, docs)
    return docs, data.IndexedReader(prefix), tmp_path


def test_indexed_roundtrip_and_megatron_bytes(corpus):
    docs, r, tmp = corpus
    assert all(numpy.array_equal(r.get(i), d) for i, d in enumerate(docs))
    assert numpy.array_equal(r.get(3, offset=1, length=2), docs[3][1:3])
    M = megatron_indexed()
    b = M.IndexedDatasetBuilder(str(tmp / "m.bin"), dtype=numpy.uint16)
    for d in docs:
        b.add_item(torch.tensor(d))
        b.end_document()
    b.finalize(str(tmp / "m.idx"))
    for ext in (".bin", ".idx"):
        assert (tmp / ("c" + ext)).read_bytes() == (tmp / ("m" + ext)).read_bytes()


@pytest.mark.parametrize("n", [40, 120, 150])
def test_samples_are_the_stream_and_equal_megatron(corpus, n):
    _, r, _ = corpus
    s = data.GPTSamples(r, 16, n, seed=5)
    stream = numpy.concatenate([r.get(int(i)) for i in s.doc_index])
    for i, j in enumerate(s.shuffle_idx.tolist()):
        assert numpy.array_equal(s[i], stream[16 * j : 16 * j + 17])
    for a, b in zip(
        (s.doc_index, s.sample_idx, s.shuffle_idx), megatron_gpt_indices(r, 16, n, 5), strict=True
    ):
        assert numpy.array_equal(a, b)


def test_cache_hit(corpus):
    _, r, tmp = corpus
    first = data.GPTSamples(r, 16, 50, seed=1, cache_dir=str(tmp / "cache"))
    again = data.GPTSamples(r, 16, 50, seed=1, cache_dir=str(tmp / "cache"))
    assert (first.cache_hit, again.cache_hit) == (False, True)
    assert len(os.listdir(tmp / "cache")) == 3


def test_blend_prefixes_stay_within_one_sample():
    w = numpy.array([0.6, 0.25, 0.15])
    ds, within = data.blending_indices(w, 2000)
    counts = numpy.zeros(3)
    for i, d in enumerate(ds):
        assert within[i] == counts[d]
        counts[d] += 1
        assert numpy.abs(counts - w * (i + 1)).max() < 1


def test_sampler_resume_and_megatron():
    whole = list(data.PretrainingSampler(64, 0, 2, 1, 2))
    assert list(data.PretrainingSampler(64, 12, 2, 1, 2)) == whole[3:]
    S = megatron_sampler()
    for c in (0, 8, 20):
        for dp in (1, 2, 4):
            for k in range(dp):
                assert list(data.PretrainingSampler(64, c, 2, k, dp)) == list(S(64, c, 2, k, dp))


# ---------------------------------------------------------------------------------------------
# memory model
# ---------------------------------------------------------------------------------------------


def test_memory_model_equals_allocated_bytes():
    held = small_config_bytes(32, 2, 32, 4, 2, "selective")
    assert held["state"] == memory.state_bytes(held["params"], memory.Layout())
    assert held["activations"] == 2 * memory.layer_activation_bytes(
        32, 2, 32, 4, 128, recompute="selective", norm_stats=True
    )


def test_memory_model_equals_megatron():
    m = model("llama-3.1-70b")
    for lay in (memory.Layout(tp=8, pp=1, dp=8), memory.Layout(tp=4, pp=4, dp=4)):
        w, act = megatron_memory(m, lay, 4096, 1, 8)
        assert memory.state_bytes(memory.params_on_first_stage(m, lay), lay) == pytest.approx(
            w, rel=1e-5
        )
        assert memory.activation_bytes(m, lay, 4096, 1, 8) == pytest.approx(act, rel=1e-12)


def test_search_fits_and_orders():
    m = model("llama-3.1-70b")
    fits = memory.search(m, 64, 80e9, seq=8192, micro_batch=1, global_batch=512)
    assert fits and all(used <= 0.9 for _, used in fits)
    assert all(lay.gpus == 64 for lay, _ in fits)


# ---------------------------------------------------------------------------------------------
# stability
# ---------------------------------------------------------------------------------------------


def test_spike_detector_equals_megatron():
    rng = random.Random(3)
    values = [2.0 + rng.random() for _ in range(60)] + [30.0, float("nan"), 2.5, 100.0]
    ours = stability.SpikeDetector(threshold=10.0, num_samples=50)
    theirs = megatron_spike_test(10.0, 50)
    flags = [ours(v) for v in values]
    assert flags == [theirs(v) for v in values]
    assert [i for i, f in enumerate(flags) if f] == [60, 63]


@pytest.mark.parametrize(
    "kind,expected",
    [
        ("transient", stability.TRANSIENT),
        ("persistent", stability.PERSISTENT),
        ("bad", stability.CORRECT),
        ("ok", None),
    ],
)
def test_attribution(kind, expected):
    runs = []

    def step(gpu):
        runs.append(gpu)
        broken = {"transient": len(runs) == 1, "persistent": gpu == 0, "bad": True, "ok": False}[
            kind
        ]
        return float("nan") if broken else 1.0

    assert stability.attribute(step, math.isnan, 0, 1)["diagnosis"] == expected


def test_straggler_found():
    times = [100.0] * 8
    times[5] = 130.0
    assert stability.straggler_report(times, 8e12)["slow_ranks"] == [5]
