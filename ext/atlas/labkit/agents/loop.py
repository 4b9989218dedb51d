"""The agent loop: a model, a registry of tools with JSON-Schema parameters, and a log.

A step sends the model the system prompt, the tool schemas and the history derived from the
trajectory log; the model answers with text and zero or more tool calls; each call's arguments
are parsed and validated against the tool's schema, the tool runs, and its result is appended
to the log. The turn ends when the model answers without a tool call, or when a bound is hit:
the number of steps, or the tokens the requests have consumed.

The validator covers the part of JSON Schema that tool definitions use (``type``,
``properties``, ``required``, ``additionalProperties``, ``items``, ``enum``, ``minimum``,
``maximum``, ``minLength``, ``maxLength``); violations are reported with a path, as DeepSeek
Harness's ``validateArgs`` does, so that the model can read them and try again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from atlas.labkit.agents.context import request_tokens
from atlas.labkit.agents.trajectory import Trajectory

ROLE = "taught"

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """Path-qualified violations of ``value`` against ``schema``; empty means valid."""
    where = path or "(root)"
    kind = schema.get("type")
    if kind is not None and not _TYPES[kind](value):
        return [f"{where}: expected {kind}, got {type(value).__name__}"]
    out: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: must be one of {schema['enum']}")
    if kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{where}: must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{where}: must be <= {schema['maximum']}")
    if kind == "string":
        if len(value) < schema.get("minLength", 0):
            out.append(f"{where}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{where}: longer than {schema['maxLength']}")
    if kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            out += validate(schema["items"], item, f"{path}[{i}]")
    if kind == "object":
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                out.append(f"{where}: missing required property {name!r}")
        for name, item in value.items():
            if name in props:
                out += validate(props[name], item, f"{path}.{name}" if path else name)
            elif schema.get("additionalProperties", True) is False:
                out.append(f"{where}: unexpected property {name!r}")
    return out


@dataclass(frozen=True)
class Tool:
    """A tool as the model sees it (name, description, parameter schema) and its body."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Callable[..., str]


class ToolRegistry:
    """Tools by name. Schemas are listed in name order, so the prompt prefix is stable."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.dispatched: list[tuple[str, dict[str, Any]]] = []

    def register(self, tool: Tool) -> None:
        if tool.name in self.tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        if tool.parameters.get("type") != "object":
            raise ValueError(f"tool {tool.name!r}: parameters must be an object schema")
        self.tools[tool.name] = tool

    def schemas(self) -> list[dict[str, Any]]:
        return [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in sorted(self.tools.values(), key=lambda t: t.name)
        ]

    def dispatch(self, name: str, arguments: str) -> tuple[str, bool]:
        """Run one call from its raw JSON arguments: ``(content, is_error)``.

        Every failure becomes an error result the model reads on its next step: an unknown
        tool, arguments that are not JSON, arguments that break the schema, a body that
        raises. Only a valid call reaches the tool's body."""
        tool = self.tools.get(name)
        if tool is None:
            return f"Error: unknown tool {name!r}; tools: {sorted(self.tools)}", True
        try:
            args = json.loads(arguments) if arguments else {}
        except json.JSONDecodeError as exc:
            return f"Error: arguments are not JSON ({exc.msg})", True
        violations = validate(tool.parameters, args)
        if violations:
            return "Error: invalid arguments: " + "; ".join(violations), True
        self.dispatched.append((name, args))
        try:
            return tool.run(**args), False
        except Exception as exc:  # a tool's failure is an observation, not a crash
            return f"Error: {type(exc).__name__}: {exc}", True


def run_turn(
    model: Callable[[dict[str, Any]], dict[str, Any]],
    registry: ToolRegistry,
    task: str,
    *,
    log: Trajectory | None = None,
    system: str = "You are a careful software agent.",
    max_steps: int = 16,
    token_budget: int | None = None,
    before_step: Callable[[Trajectory], None] | None = None,
) -> tuple[str, Trajectory]:
    """Run one turn of the loop, appending to ``log`` (a new one if None): why it ended,
    and the log.

    ``completed``: the model answered without a tool call. ``max-steps``: the step bound was
    reached with calls still pending. ``token-budget``: the prompt tokens sent so far exceed
    ``token_budget``. ``before_step`` may rewrite the log before each request (compaction)."""
    log = Trajectory() if log is None else log
    turn = 1 + sum(e["type"] == "turn/start" for e in log.events)
    log.append("turn/start", turn=turn)
    log.append("user/message", content=task)
    spent, reason = 0, "max-steps"
    for step in range(1, max_steps + 1):
        if before_step is not None:
            before_step(log)
        log.append("step/start", turn=turn, step=step)
        request = {"system": system, "tools": registry.schemas(), "messages": log.messages()}
        spent += request_tokens(request)
        reply = model(request)
        calls = reply.get("tool_calls", [])
        log.append(
            "assistant/message",
            turn=turn,
            step=step,
            content=reply.get("content", ""),
            tool_calls=calls,
        )
        for call in calls:  # model order; DeepSeek Harness overlaps the safe ones
            log.append(
                "tool/call",
                turn=turn,
                step=step,
                call_id=call["id"],
                name=call["name"],
                arguments=call["arguments"],
            )
            content, is_error = registry.dispatch(call["name"], call["arguments"])
            log.append(
                "tool/result",
                turn=turn,
                step=step,
                call_id=call["id"],
                content=content,
                is_error=is_error,
            )
        log.append("step/end", turn=turn, step=step)
        if not calls:
            reason = "completed"
            break
        if token_budget is not None and spent > token_budget:
            reason = "token-budget"
            break
    log.append("turn/end", turn=turn, reason=reason)
    return reason, log
