"""Checks of the labs of ``agents/react.md``.

The chapter's checks: Checks, scripted models, synthetic sessions and upstream readers for the
agents labs.
"""

from __future__ import annotations

import json
from typing import Any

from atlas.labkit.agents.context import count_tokens
from atlas.labkit.agents.loop import Tool, ToolRegistry
from atlas.labkit.checks.agents.common import ScriptedModel, call

ROLE = "check"


def words(n: int, tag: str) -> str:
    """Text of exactly ``n`` tokens (one word each) that names its step."""
    return " ".join([tag] + [f"w{i}" for i in range(n - 1)])


def long_session(steps: int, output_tokens: list[int]) -> tuple[ToolRegistry, ScriptedModel]:
    """A session of ``steps`` steps: each calls ``cat`` once, whose output has the given
    token count, and the last answers without a call."""
    reg = ToolRegistry()
    sizes = dict(enumerate(output_tokens))
    reg.register(
        Tool(
            "cat",
            "Print a file.",
            {"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]},
            lambda i: words(sizes[i], f"out{i}"),
        )
    )
    script = [
        {"content": f"step {i}", "tool_calls": [call(f"c{i}", "cat", i=i)]}
        for i in range(steps - 1)
    ]
    script.append({"content": "done", "tool_calls": []})
    return reg, ScriptedModel(script)


def step_tokens(i: int, output: int) -> int:
    """Tokens one step of :func:`long_session` adds to the history (assistant + result)."""
    assistant = 4 + count_tokens(f"step {i}") + count_tokens("cat")
    assistant += count_tokens(json.dumps({"i": i}))
    return assistant + 4 + output


def fixed_summary(messages: list[dict[str, Any]], max_tokens: int) -> str:
    """A stand-in summariser whose output is always exactly ``max_tokens`` tokens long."""
    return words(max_tokens, f"summary-of-{len(messages)}")


def compaction_schedule(
    steps: int,
    g: int,
    window: int,
    fixed: int,
    task: int,
    summary: int,
    threshold_ratio: float,
    retain_ratio: float,
) -> list[int]:
    """The steps before which compaction fires, by arithmetic on token counts alone.

    Before step ``k`` the request holds ``fixed`` tokens, the task message (``task`` tokens),
    a summary message (``summary`` tokens plus 4) once there is one, and ``h`` steps of ``g``
    tokens. Past the threshold, all but the last ``max(1, floor(retain / g))`` steps (and any
    earlier summary) become one summary."""
    threshold, retain = int(window * threshold_ratio), int(window * retain_ratio)
    kept = max(1, retain // g)
    h, has_summary, fired = 0, False, []
    for k in range(1, steps + 1):
        total = fixed + task + (summary + 4 if has_summary else 0) + h * g
        if total > threshold and (h > kept or (has_summary and h >= kept)):
            fired.append(k)
            h, has_summary = kept, True
        h += 1
    return fired
