"""Checking code that several pages of the agents chapter share: ``agents/agentenv.md``,
``agents/harness.md``, ``agents/index.md``, ``agents/problems.md``, ``agents/react.md``.

The chapter's checks: Checks, scripted models, synthetic sessions and upstream readers for the
agents labs.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import tomllib
from typing import Any

from atlas.labkit.agents.loop import Tool, ToolRegistry, run_turn
from atlas.labkit.agents.trajectory import Trajectory
from atlas.labkit.pinned import read

ROLE = "check"


def _ts_number(text: str, name: str) -> float:
    match = re.search(rf"const {name} = ([0-9.]+)", text)
    if match is None:
        raise LookupError(f"no `const {name} = <number>` in the file (did the pin move?)")
    return float(match.group(1))


@functools.cache
def dsh_defaults() -> dict[str, float]:
    """DeepSeek Harness's compaction and scheduling defaults, read from its TypeScript."""
    config, _ = read("deepseek-harness", "packages/compaction/compaction-basic/src/config.ts")
    loop, _ = read("deepseek-harness", "packages/core/agent-loop/src/constants.ts")
    return {
        "threshold_ratio": _ts_number(config, "DEFAULT_THRESHOLD_RATIO"),
        "retain_ratio": _ts_number(config, "DEFAULT_RETAIN_RATIO"),
        "max_parallel_tool_calls": _ts_number(loop, "DEFAULT_MAX_PARALLEL_TOOL_CALLS"),
    }


@functools.cache
def agentenv_config() -> dict[str, Any]:
    """AgentENV's shipped node configuration, ``config/default.toml`` at the pin."""
    text, _ = read("agentenv", "config/default.toml")
    return tomllib.loads(text)


class ScriptedModel:
    """Answers each request with the next reply of a script, and keeps the requests."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(copy.deepcopy(request))
        if not self.replies:
            raise RuntimeError("the script has no reply left")
        return self.replies.pop(0)


def call(call_id: str, name: str, **args: Any) -> dict[str, str]:
    return {"id": call_id, "name": name, "arguments": json.dumps(args)}


def repo_tools(files: dict[str, str]) -> ToolRegistry:
    """Three tools over an in-memory repository: read, write, and a fake test run."""
    reg = ToolRegistry()
    path = {"type": "string", "minLength": 1}
    reg.register(
        Tool(
            "read_file",
            "Read a file of the repository.",
            {
                "type": "object",
                "properties": {"path": path},
                "required": ["path"],
                "additionalProperties": False,
            },
            lambda path: files[path],
        )
    )

    def write_file(path: str, content: str) -> str:
        files[path] = content
        return f"wrote {len(content)} characters to {path}"

    reg.register(
        Tool(
            "write_file",
            "Replace a file's content.",
            {
                "type": "object",
                "properties": {"path": path, "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": False,
            },
            write_file,
        )
    )

    def run_tests(pattern: str = "test_", verbose: bool = False) -> str:
        ok = "return a + b" in files.get("calc.py", "")
        return "1 passed" if ok else "1 failed: test_add expected 5, got -1"

    reg.register(
        Tool(
            "run_tests",
            "Run the test suite.",
            {
                "type": "object",
                "properties": {"pattern": {"type": "string"}, "verbose": {"type": "boolean"}},
                "additionalProperties": False,
            },
            run_tests,
        )
    )
    return reg


def bugfix_task() -> tuple[ToolRegistry, ScriptedModel, dict[str, str]]:
    """A four-step session: run the tests, read the file (and one malformed call), fix it,
    run the tests again, then answer."""
    files = {"calc.py": "def add(a, b):\n    return a - b\n"}
    script = [
        {"content": "Run the tests first.", "tool_calls": [call("c1", "run_tests")]},
        {
            "content": "Read the code.",
            "tool_calls": [
                call("c2", "read_file", path="calc.py"),
                {"id": "c3", "name": "read_file", "arguments": '{"file": "calc.py"}'},
            ],
        },
        {
            "content": "Fix the operator.",
            "tool_calls": [
                call(
                    "c4", "write_file", path="calc.py", content="def add(a, b):\n    return a + b\n"
                )
            ],
        },
        {"content": "Check.", "tool_calls": [call("c5", "run_tests", verbose=True)]},
        {"content": "Fixed: add() subtracted; it now adds and the test passes.", "tool_calls": []},
    ]
    return repo_tools(files), ScriptedModel(script), files


def pairing_errors(messages: list[dict[str, Any]]) -> list[str]:
    """Transcript errors a model API would reject: a tool result that answers no open call,
    or an assistant message (or the end) reached while calls are still unanswered."""
    errors: list[str] = []
    open_calls: list[str] = []
    for i, m in enumerate(messages):
        if m["role"] == "assistant":
            if open_calls:
                errors.append(f"message {i}: calls {open_calls} unanswered")
            open_calls = [c["id"] for c in m.get("tool_calls", [])]
        elif m["role"] == "tool":
            if m["call_id"] not in open_calls:
                errors.append(f"message {i}: result for {m['call_id']} answers no open call")
            else:
                open_calls.remove(m["call_id"])
    if open_calls:
        errors.append(f"end: calls {open_calls} unanswered")
    return errors


def run_session(model: Any, registry: ToolRegistry, task: str, **kw: Any) -> Trajectory:
    """Drive one turn of the chapter's loop and return its log (for labs whose page teaches
    something else than the loop)."""
    reason, log = run_turn(model, registry, task, **kw)
    log.reason = reason  # type: ignore[attr-defined]
    return log
