"""An agent's trajectory as an append-only event log, the model's history derived from it.

Every fact that can reach a model request is an event: a turn or step opening and closing, a
user message, an assistant message (with the tool calls it asks for), a tool call starting and
its result, and a compaction that replaces part of the history with a summary. The messages
sent to the model are never kept anywhere else: :meth:`Trajectory.messages` derives them from
the log, so a saved log replays the session exactly. :func:`check` states the turn invariant
as rules on the sequence of events, :func:`close_interrupted` repairs the tail of a log cut by
a crash, and :class:`ReplayModel` answers a replayed session from a recorded one.

The design follows DeepSeek Harness's session log (``packages/core/session``) at its pin: the
same event names, the same nesting of turns and steps, the same pairing of calls and results.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

ROLE = "taught"

MESSAGE_EVENTS = ("user/message", "assistant/message", "tool/result")


@dataclass
class Trajectory:
    """The append-only log of one session. ``seq`` of an event equals its index."""

    events: list[dict[str, Any]] = field(default_factory=list)

    def append(self, type_: str, **data: Any) -> dict[str, Any]:
        """Append one event; its data is copied through JSON so the log holds plain values."""
        event = {"type": type_, "seq": len(self.events), "data": json.loads(json.dumps(data))}
        self.events.append(event)
        return event

    def nodes(self) -> list[tuple[int, int, dict[str, Any]]]:
        """The history as ``(first_seq, last_seq, message)`` nodes, folded over the log.

        A message event adds one node. A ``context/replace`` event removes the nodes that lie
        inside its ``[first, last]`` range of sequence numbers and puts one node holding its
        summary, as a user message, where they were."""
        out: list[tuple[int, int, dict[str, Any]]] = []
        for e in self.events:
            if e["type"] in MESSAGE_EVENTS:
                out.append((e["seq"], e["seq"], _message(e)))
            elif e["type"] == "context/replace":
                first, last = e["data"]["first"], e["data"]["last"]
                at = next(i for i, n in enumerate(out) if n[0] >= first)
                summary = {"role": "user", "content": e["data"]["summary"], "summary": True}
                out[at:] = [(first, last, summary)] + [n for n in out[at:] if n[0] > last]
        return out

    def messages(self) -> list[dict[str, Any]]:
        """The model's history: what every request of the session is built from."""
        return [m for _, _, m in self.nodes()]

    def dumps(self) -> str:
        """One JSON object per line: the form a trajectory is stored and shipped in."""
        return "".join(json.dumps(e, sort_keys=True) + "\n" for e in self.events)

    @classmethod
    def loads(cls, text: str) -> Trajectory:
        return cls([json.loads(line) for line in text.splitlines() if line.strip()])


def _message(e: dict[str, Any]) -> dict[str, Any]:
    d = e["data"]
    if e["type"] == "user/message":
        return {"role": "user", "content": d["content"]}
    if e["type"] == "assistant/message":
        return {"role": "assistant", "content": d["content"], "tool_calls": d["tool_calls"]}
    return {
        "role": "tool",
        "call_id": d["call_id"],
        "content": d["content"],
        "is_error": d["is_error"],
    }


def check(events: Iterable[dict[str, Any]]) -> list[str]:
    """Violations of the turn invariant, in log order; an empty list means the log is valid.

    Turns are numbered 1, 2, ... and never overlap; steps are numbered from 1 inside their turn
    and never overlap; every step-scoped event names the open turn and step; a tool result
    answers a call started earlier in the same step; and when a step closes, every tool call
    its assistant message asked for has exactly one result."""
    bad: list[str] = []
    open_turn: int | None = None
    open_step: int | None = None
    next_turn, next_step = 1, 1
    asked: list[str] = []  # call ids the step's assistant message asked for
    started: set[str] = set()
    answered: set[str] = set()
    for i, e in enumerate(events):
        t, d = e["type"], e["data"]
        if e["seq"] != i:
            bad.append(f"seq {e['seq']} at index {i}")
        if t == "turn/start":
            if open_turn is not None:
                bad.append(f"turn/start {d['turn']} while turn {open_turn} is open")
            if d["turn"] != next_turn:
                bad.append(f"turn/start expected turn {next_turn}, got {d['turn']}")
            open_turn, next_step = d["turn"], 1
        elif t == "turn/end":
            if open_turn != d["turn"] or open_step is not None:
                bad.append(f"turn/end {d['turn']} with turn {open_turn} step {open_step} open")
            open_turn, next_turn = None, next_turn + 1
        elif t == "step/start":
            if open_turn != d["turn"] or open_step is not None or d["step"] != next_step:
                bad.append(f"step/start {d['turn']}.{d['step']} out of order")
            open_step, asked, started, answered = d["step"], [], set(), set()
        elif t == "step/end":
            if (open_turn, open_step) != (d["turn"], d["step"]):
                bad.append(f"step/end {d['turn']}.{d['step']} does not close the open step")
            missing = [c for c in asked if c not in answered]
            if missing:
                bad.append(f"step {d['turn']}.{d['step']} closes with unanswered calls {missing}")
            open_step, next_step = None, next_step + 1
        elif t in ("assistant/message", "tool/call", "tool/result"):
            if (open_turn, open_step) != (d["turn"], d["step"]):
                bad.append(f"{t} outside its step ({d['turn']}.{d['step']})")
            if t == "assistant/message":
                asked = [c["id"] for c in d["tool_calls"]]
            elif t == "tool/call":
                if d["call_id"] not in asked:
                    bad.append(f"tool/call {d['call_id']} that the model did not ask for")
                started.add(d["call_id"])
            else:
                if d["call_id"] not in started or d["call_id"] in answered:
                    bad.append(f"tool/result {d['call_id']} without one open tool/call")
                answered.add(d["call_id"])
        elif t == "user/message" and open_turn is None:
            bad.append("user/message outside any turn")
    return bad


def close_interrupted(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Synthetic events that close the open turn of a log cut by a crash, in order.

    A call the model asked for that never started gets an error result saying so; a call that
    started but has no result gets one saying its outcome is unknown (it may have had side
    effects); then the open step and the open turn are closed. A balanced log needs none."""
    open_turn = open_step = None
    pending: dict[str, bool] = {}  # call id -> whether its tool/call was recorded
    for e in events:
        t, d = e["type"], e["data"]
        if t in ("turn/start", "turn/end"):
            open_turn = d["turn"] if t == "turn/start" else None
            open_step, pending = None, {}
        elif t == "step/start":
            open_step = d["step"]
        elif t == "step/end":
            open_step, pending = None, {}
        elif t == "assistant/message":
            pending.update({c["id"]: False for c in d["tool_calls"]})
        elif t == "tool/call" and d["call_id"] in pending:
            pending[d["call_id"]] = True
        elif t == "tool/result":
            pending.pop(d["call_id"], None)
    if open_turn is None:
        return []
    seq, out = len(events), []

    def add(type_: str, **data: Any) -> None:
        nonlocal seq
        out.append({"type": type_, "seq": seq, "data": data})
        seq += 1

    for call_id, started in pending.items():
        if not started:  # providers reject an assistant call with no result: record one
            add("tool/call", turn=open_turn, step=open_step, call_id=call_id, name="", arguments="")
        text = (
            "interrupted after it started; its outcome is unknown"
            if started
            else "interrupted before it started; retry if still needed"
        )
        add(
            "tool/result",
            turn=open_turn,
            step=open_step,
            call_id=call_id,
            content=text,
            is_error=True,
        )
    if open_step is not None:
        add("step/end", turn=open_turn, step=open_step)
    add("turn/end", turn=open_turn, reason="interrupted")
    return out


class ReplayModel:
    """A model that answers from a recorded trajectory, one assistant message per request.

    Each request must carry exactly the history the recorded session had derived before the
    same answer: a replay that diverges (a tool returns something else, a message is lost)
    fails at the first request that differs, not at the end."""

    def __init__(self, recorded: Trajectory) -> None:
        self.answers: list[dict[str, Any]] = []
        self.histories: list[list[dict[str, Any]]] = []
        prefix = Trajectory()
        for e in recorded.events:
            if e["type"] == "assistant/message":
                self.answers.append(
                    {"content": e["data"]["content"], "tool_calls": e["data"]["tool_calls"]}
                )
                self.histories.append(prefix.messages())
            prefix.events.append(e)
        self.calls = 0

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        i = self.calls
        if i >= len(self.answers):
            raise RuntimeError(f"replay has no answer for request {i + 1}")
        if request["messages"] != self.histories[i]:
            raise RuntimeError(f"request {i + 1} diverges from the recorded history")
        self.calls += 1
        return self.answers[i]
