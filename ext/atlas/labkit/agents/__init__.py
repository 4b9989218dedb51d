"""Taught code of the agents chapter (source/agents/), each module shown on its pages.

Small modules written for reading next to the chapter: an append-only trajectory log with the
turn invariant, replay and crash repair (``trajectory``); a tool registry with a JSON-Schema
validator and the agent loop that drives a model against it (``loop``); token budgets,
truncation and summarising compaction (``context``); a process sandbox built from resource
limits and a self-restrict-then-exec launcher (``sandbox``); environment pools for agentic RL
rollouts (``envpool``); and the serving arithmetic of long multi-turn sessions (``sessions``).
The labs' scripted models, synthetic sessions and checkers, and the readers of the upstreams'
files at their pins, are the ``atlas.labkit.checks.agents``.
"""

ROLE = "taught"
