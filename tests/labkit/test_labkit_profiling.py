"""Fast checks of the Profiling chapter's labkit (no Sphinx)."""

import torch
from atlas.labkit.checks.profiling.common import measured_linear, mlp
from atlas.labkit.checks.profiling.memory import allocator_peak, profiled_snapshot
from atlas.labkit.checks.profiling.torch_profiler import (
    profile_mlp_step,
    tables_agree,
    torch_schedule,
)
from atlas.labkit.profiling import memory as M
from atlas.labkit.profiling import roofline as R
from atlas.labkit.profiling import trace as T


def test_schedule_matches_torch():
    for kw in (
        dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1),
        dict(wait=0, warmup=2, active=3),
    ):
        assert torch_schedule(20, **kw) == [T.schedule_action(s, **kw) for s in range(20)]


def test_operator_table_matches_key_averages():
    theirs, trace = profile_mlp_step(16, 32, 64)
    ours = T.operator_table(T.operator_events(trace))
    names = [n for n in ours if n.startswith("aten::")]
    assert tables_agree(ours, theirs, names)


def test_replay_leak():
    model, x, losses = mlp(32, 128), torch.randn(8, 32), []

    def leaky():
        for _ in range(2):
            losses.append(model(x).pow(2).mean())

    trace, chrome = profiled_snapshot(leaky)
    r = M.replay(trace)
    assert r.peak == allocator_peak(chrome)
    assert sum(e["size"] for e in r.live_at_end.values()) == 2 * (2 * 8 * 128 * 4 + 8 * 32 * 4 + 4)


def test_linear_cost():
    assert measured_linear(4, 64, 96) == R.linear_cost(4, 64, 96, 2)
    p = R.place(*R.linear_cost(1, 4096, 4096, 2), peak=1e15, bandwidth=3e12)
    assert p.bound == "memory" and abs(p.roof - p.intensity * 3e12) < 1
