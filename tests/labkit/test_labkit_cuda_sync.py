"""The CPU thread model's warp votes, bit casts and atomics (added for kernels/cuda-sync.md), and
that it interleaves threads so that a missing ``__syncthreads()`` gives a wrong result.

Each test compiles a small kernel with the host compiler only (no nvcc), in a cache of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from atlas.labkit.checks.kernels.cuda_common import build
from atlas.labkit.checks.kernels.cuda_sync import count_findings, rotate_findings
from atlas.labkit.cuda.cpu import KernelRunError, build_cpu

pytestmark = pytest.mark.usefixtures("cuda_compile_cache")


VOTES = """
extern "C" __global__ void votes(const float* x, unsigned* ballot, int* any, int* all, int* pop) {
  unsigned t = threadIdx.x;
  bool p = x[t] > 0.0f;
  unsigned b = __ballot_sync(0xffffffffu, p);
  int a = __any_sync(0xffffffffu, p), l = __all_sync(0xffffffffu, p);
  if (t % 32 == 0) {
    ballot[t / 32] = b;
    any[t / 32] = a;
    all[t / 32] = l;
    pop[t / 32] = __popc(b);
  }
}
extern "C" __global__ void bits(const float* x, int* out) {
  out[threadIdx.x] = __float_as_int(__int_as_float(__float_as_int(x[threadIdx.x])));
}
extern "C" __global__ void half_vote(float* out) {
  if (threadIdx.x < 16) out[threadIdx.x] = __ballot_sync(0xffffffffu, 1);
}
"""


def test_ballot_any_all_and_popc_match_a_plain_loop(tmp_path: Path) -> None:
    (tmp_path / "v.cu").write_text(VOTES, encoding="utf-8")
    cpu = build_cpu(tmp_path / "v.cu")
    x = torch.randn(96, generator=torch.Generator().manual_seed(3))
    x[64:] = 1.0  # the third warp: every lane passes
    ballot, any_, all_, pop = (torch.zeros(3, dtype=torch.int32) for _ in range(4))
    for reverse in (False, True):
        cpu.launch("votes", 1, 96, x, ballot, any_, all_, pop, reverse=reverse)
        for w in range(3):
            lanes = [bool(x[32 * w + lane] > 0) for lane in range(32)]
            want = sum(1 << lane for lane, p in enumerate(lanes) if p)
            assert ballot[w].item() & 0xFFFFFFFF == want
            assert (any_[w].item(), all_[w].item(), pop[w].item()) == (
                int(any(lanes)),
                int(all(lanes)),
                sum(lanes),
            )


def test_bit_casts_round_trip_and_match_torch(tmp_path: Path) -> None:
    (tmp_path / "v.cu").write_text(VOTES, encoding="utf-8")
    cpu = build_cpu(tmp_path / "v.cu")
    x = torch.tensor([1.0, -2.5, float("inf"), 0.0] * 8)
    out = torch.zeros(32, dtype=torch.int32)
    cpu.launch("bits", 1, 32, x, out)
    assert torch.equal(out, x.view(torch.int32))


def test_a_vote_that_misses_lanes_is_a_message_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "v.cu").write_text(VOTES, encoding="utf-8")
    cpu = build_cpu(tmp_path / "v.cu")
    with pytest.raises(KernelRunError, match="exited"):
        cpu.launch("half_vote", 1, 32, torch.zeros(32))


def test_the_model_interleaves_so_a_missing_barrier_is_wrong_and_the_barrier_fixes_it() -> None:
    b = build("sync.cu", archs=())
    assert rotate_findings(b, "rotate_block") == {"rotate_block": []}
    racy = rotate_findings(b, "rotate_block_racy", sizes=(512,))["rotate_block_racy"]
    assert racy == [
        "n=512, threads in order: 510 of 512 wrong",  # all but the last thread of each block
        "n=512, threads reversed: 2 of 512 wrong",  # the last thread of each block
    ]


def test_atomic_add_converts_its_value_as_cudas_overloads_do() -> None:
    b = build("sync.cu", archs=())  # count_warp_aggregated: atomicAdd(unsigned*, int)
    assert count_findings(b, ("count_warp_aggregated", "count_per_block"), sizes=(3000,)) == {
        "count_warp_aggregated": [],
        "count_per_block": [],
    }
