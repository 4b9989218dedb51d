"""Mutations of the agents chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
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
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "pool-floor",
        "agents",
        "agents/envpool.py",
        "    return math.ceil(demand_rate(workers, episode) * startup - 1e-9)",
        "    return int(demand_rate(workers, episode) * startup)",
        ("agents/agentenv",),
        "the pool that hides start-up is rounded down",
    ),
    Mutation(
        "cold-throughput-no-startup",
        "agents",
        "agents/envpool.py",
        "        return workers / (episode + startup)",
        "        return workers / episode",
        ("agents/agentenv",),
        "without a pool the throughput forgets the start-up time",
    ),
    # Written first on the ``usable`` line (the last prompt token always computed), which is
    # an equivalent mutant: step t's prompt extends step t-1's cache by at least one token, so
    # ``written // block`` never exceeds ``(prompt - 1) // block`` and the ``min`` ignores it.
    # The same bug bites on the cache step t-1 leaves behind.
    Mutation(
        "cache-hit-counts-last-token",
        "agents",
        "agents/sessions.py",
        "        written = s.prompt(t - 1) + s.out[t - 1] - 1  # tokens whose cache step t-1 computed",
        "        written = s.prompt(t - 1) + s.out[t - 1]  # tokens whose cache step t-1 computed",
        ("agents/serving",),
        "prefix-cache hits count the last sampled token, whose KV was never computed",
    ),
    Mutation(
        "compaction-at-threshold",
        "agents",
        "agents/context.py",
        "    while total > budget and dropped < len(droppable):",
        "    while total >= budget and dropped < len(droppable):",
        ("agents/react", "agents/harness"),
        "context trimming drops a message when the request exactly fits",
    ),
]
