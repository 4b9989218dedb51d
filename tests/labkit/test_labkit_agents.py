"""Unit tests of the agents chapter's labkit (ext/atlas/labkit/agents): fast, no Sphinx."""

from __future__ import annotations

import json
import signal

import pytest
from atlas.labkit.agents import envpool, sessions
from atlas.labkit.agents.context import (
    ContextOverflow,
    compact,
    count_tokens,
    message_tokens,
    truncate,
)
from atlas.labkit.agents.loop import ToolRegistry, run_turn, validate
from atlas.labkit.agents.sandbox import Limits, run_confined
from atlas.labkit.agents.trajectory import ReplayModel, Trajectory, check, close_interrupted
from atlas.labkit.checks.agents.agentenv import burst_targets
from atlas.labkit.checks.agents.common import (
    ScriptedModel,
    bugfix_task,
    call,
    pairing_errors,
    repo_tools,
)
from atlas.labkit.checks.agents.index import EDIT_SCHEMA, argument_cases, shape
from atlas.labkit.checks.agents.react import (
    compaction_schedule,
    fixed_summary,
    long_session,
    step_tokens,
)
from atlas.labkit.checks.agents.sandboxes import CPU_HOG, MEMORY_HOG, python
from atlas.labkit.checks.agents.serving import coding_session, measured_cached_tokens


# -- loop and validator ------------------------------------------------------------------------
def test_validator_matches_construction_labels():
    cases = argument_cases(300, seed=3)
    assert all((validate(EDIT_SCHEMA, a) == []) == ok for a, ok in cases)


def test_validator_rejects_bool_as_integer_and_reports_paths():
    assert validate({"type": "integer"}, True) == ["(root): expected integer, got bool"]
    errors = validate(EDIT_SCHEMA, {"path": "a", "line": 1, "mode": "insert", "lines": ["x", 2]})
    assert errors == ["lines[1]: expected string, got int"]


def test_dispatch_turns_every_failure_into_an_error_result():
    reg = repo_tools({"a.py": "x"})
    assert reg.dispatch("nope", "{}")[1] is True
    assert reg.dispatch("read_file", "{not json")[1] is True
    assert reg.dispatch("read_file", '{"path": ""}')[1] is True
    assert reg.dispatch("read_file", '{"path": "missing.py"}') == (
        "Error: KeyError: 'missing.py'",
        True,
    )
    assert reg.dispatch("read_file", '{"path": "a.py"}') == ("x", False)
    assert [name for name, _ in reg.dispatched] == ["read_file", "read_file"]


def test_schemas_are_sorted_and_duplicates_refused():
    reg = repo_tools({})
    assert [s["name"] for s in reg.schemas()] == ["read_file", "run_tests", "write_file"]
    with pytest.raises(ValueError):
        reg.register(reg.tools["read_file"])


def test_bugfix_session_shape_and_invariant():
    reg, model, files = bugfix_task()
    reason, log = run_turn(model, reg, "fix")
    assert reason == "completed"
    assert shape(log.messages()) == "UATATTATATA"
    assert check(log.events) == [] and pairing_errors(log.messages()) == []
    assert "return a + b" in files["calc.py"]


def test_stop_reasons_max_steps_and_token_budget():
    forever = [{"content": "again", "tool_calls": [call(f"c{i}", "run_tests")]} for i in range(50)]
    reason, log = run_turn(ScriptedModel(forever), repo_tools({}), "loop", max_steps=3)
    assert reason == "max-steps" and check(log.events) == []
    reason, _ = run_turn(ScriptedModel(forever), repo_tools({}), "loop", token_budget=500)
    assert reason == "token-budget"


# -- trajectory ----------------------------------------------------------------------------------
def test_replay_is_byte_identical_and_detects_divergence():
    reg, model, _ = bugfix_task()
    _, log = run_turn(model, reg, "fix")
    again, _, _ = bugfix_task()
    _, replayed = run_turn(ReplayModel(Trajectory.loads(log.dumps())), again, "fix")
    assert replayed.dumps() == log.dumps() and again.dispatched == reg.dispatched
    other, _, files = bugfix_task()
    files["calc.py"] = "different"
    with pytest.raises(RuntimeError, match="request 3 diverges"):
        run_turn(ReplayModel(log), other, "fix")


def test_repair_at_every_cut_and_damage_detected():
    reg, model, _ = bugfix_task()
    _, log = run_turn(model, reg, "fix")
    for cut in range(1, len(log.events)):
        head = log.events[:cut]
        whole = Trajectory(head + close_interrupted(head))
        assert check(whole.events) == [] and pairing_errors(whole.messages()) == [], cut
    assert close_interrupted(log.events) == []
    broken = [e for e in log.events if e["type"] != "tool/result"]
    assert check([dict(e, seq=i) for i, e in enumerate(broken)])


def test_context_replace_folds_into_one_summary_node():
    log = Trajectory()
    for i in range(4):
        log.append("user/message", content=f"m{i}")
    log.append("context/replace", first=1, last=2, summary="s")
    assert [m["content"] for m in log.messages()] == ["m0", "s", "m3"]
    log.append("context/replace", first=0, last=3, summary="t")
    assert [m["content"] for m in log.messages()] == ["t"]


# -- context ---------------------------------------------------------------------------------------
def test_truncate_keeps_task_and_tail_and_fits():
    reg, model = long_session(30, [200] * 30)
    _, log = run_turn(model, reg, "task", max_steps=50)
    full = log.messages()
    short = truncate(full, 3000, keep_last=2)
    assert sum(message_tokens(m) for m in short) <= 3000
    assert short[0] == full[0] and short[-3:] == full[-3:] and pairing_errors(short) == []
    with pytest.raises(ContextOverflow):
        truncate(full, 100, keep_last=2)


def test_compaction_schedule_matches_log_level_compaction():
    reg, model = long_session(60, [250] * 60)
    system, task, window = "sys", "Read.", 6000
    fixed = count_tokens(system) + count_tokens(json.dumps(reg.schemas()))
    fired = []

    def before(log):
        k = 1 + sum(e["type"] == "step/start" for e in log.events)
        if compact(log, window, overhead=fixed, summary_tokens=150, summarize=fixed_summary):
            fired.append(k)

    reason, log = run_turn(model, reg, task, system=system, max_steps=80, before_step=before)
    assert reason == "completed" and fired
    assert fired == compaction_schedule(
        60, step_tokens(0, 250), window, fixed, 4 + count_tokens(task), 150, 0.8, 0.16
    )
    assert check(log.events) == [] and pairing_errors(log.messages()) == []


# -- sandbox -------------------------------------------------------------------------------------
def test_memory_limit_stops_allocation_at_the_limit():
    limit = 128 * 2**20
    out = run_confined(python(MEMORY_HOG), Limits(memory_bytes=limit))
    sizes = [int(x) for x in out.stdout.split()]
    assert out.verdict == "memory-limit"
    assert max(sizes) <= limit and limit - sizes[-1] < 2 * 16 * 2**20


def test_cpu_limit_kills_with_sigxcpu():
    out = run_confined(python(CPU_HOG), Limits(cpu_seconds=1))
    assert out.verdict == "cpu-limit" and out.returncode == -signal.SIGXCPU
    assert 0.75 <= out.cpu_seconds < 2.0


def test_plain_command_runs():
    out = run_confined(python("print(6 * 7)"), Limits(cpu_seconds=5, wall_seconds=120))
    assert (out.verdict, out.stdout.strip()) == ("ok", "42")


# -- environment pools -----------------------------------------------------------------------------
@pytest.mark.parametrize("workers,episode,startup", [(64, 30.0, 2.0), (10, 5.0, 3.0)])
def test_pool_formula_against_simulation(workers, episode, startup):
    n = envpool.pool_to_hide_startup(workers, episode, startup)
    ok = envpool.simulate_rollouts(workers, episode, startup, n, horizon=300, warmup=50)
    short = envpool.simulate_rollouts(workers, episode, startup, n - 1, horizon=300, warmup=50)
    assert ok.mean_wait == 0 and short.mean_wait > 0
    for pool in (0, n - 1, n):
        sim = envpool.simulate_rollouts(workers, episode, startup, pool, horizon=300, warmup=50)
        expect = envpool.throughput_closed_form(workers, episode, startup, pool)
        assert abs(sim.throughput / expect - 1) < 0.03


def test_watermark_pool_against_formula():
    for burst in (None, 1, 2, 3, 5):
        pool, got = envpool.WatermarkPool(2, 64), []
        for _ in range(6):
            pool.maintain()
            for _ in range(pool.idle if burst is None else burst):
                pool.acquire()
            got.append(pool.target)
        assert got == burst_targets(2, 64, 6, burst)


def test_environments_per_host():
    assert envpool.environments_per_host(2**40, 128, 2**30, 2, 9.6, 4) == 256
    assert envpool.environments_per_host(2**40, 10**6, 2**30, 2, 9.6) == 9830


# -- sessions --------------------------------------------------------------------------------------
def test_cached_tokens_match_serving_caches():
    s = coding_session(12, seed=5, prefix=500)
    for block in (1, 8, 16):
        assert measured_cached_tokens(s, block) == sessions.cached_tokens(s, block)
    assert sum(measured_cached_tokens(s, 16, stamp_every_step=True)) == 0
    assert sessions.prefill_with_cache(s) == s.prefix + sum(s.new) + len(s.new) - 1


def test_slot_utilization_against_simulation():
    for n in (2, 6, 8, 12):
        sim = sessions.simulate_sessions(n, 1.0, 3.0, 2, horizon=400, warmup=40)
        assert abs(sim.utilization - sessions.slot_utilization(n, 1.0, 3.0, 2)) < 0.01
        assert abs(sim.mean_step_latency - sessions.step_latency(n, 1.0, 3.0, 2)) < 0.05


def test_registry_helpers_are_unaffected():
    # the harness builds its tools through the taught registry
    assert isinstance(repo_tools({}), ToolRegistry)


def test_cached_tokens_match_nano_vllm_block_manager():
    """The closed form against nano-vllm's own scheduler and block manager at the pin."""
    import pytest
    from atlas.labkit.checks.agents.serving import nano_vllm_cached_tokens
    from atlas.labkit.pinned import UpstreamUnavailable

    s = coding_session(12, seed=5, prefix=500)
    try:
        _, hits = nano_vllm_cached_tokens(s, 16)
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    assert hits == sessions.cached_tokens(s, 16)
