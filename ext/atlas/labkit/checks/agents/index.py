"""Checks of the labs of ``agents/index.md``.

The chapter's checks: Checks, scripted models, synthetic sessions and upstream readers for the
agents labs.
"""

from __future__ import annotations

import random
from typing import Any

from atlas.labkit.agents.trajectory import Trajectory

ROLE = "check"


def shape(messages: list[dict[str, Any]]) -> str:
    """A transcript's roles in order: ``U`` user, ``A`` assistant, ``T`` tool, ``S`` summary."""
    return "".join("S" if m.get("summary") else m["role"][0].upper() for m in messages)


EDIT_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "line": {"type": "integer", "minimum": 1},
        "mode": {"type": "string", "enum": ["insert", "replace", "delete"]},
        "lines": {"type": "array", "items": {"type": "string"}},
        "dry_run": {"type": "boolean"},
    },
    "required": ["path", "line", "mode"],
    "additionalProperties": False,
}


def argument_cases(n: int, seed: int = 0) -> list[tuple[dict[str, Any], bool]]:
    """``n`` argument objects for :data:`EDIT_SCHEMA`, each with whether it is valid.

    A case starts valid (drawn from the schema's own constraints) and, with probability one
    half, receives one mutation that breaks exactly one constraint: a required key removed,
    an unknown key added, a value of the wrong type (``True`` where an integer is expected
    included), a number below its minimum, a string outside the enum, an empty path, a
    non-string array item. The label comes from the construction, not from a validator."""
    rng = random.Random(seed)
    out: list[tuple[dict[str, Any], bool]] = []
    for _ in range(n):
        args: dict[str, Any] = {
            "path": rng.choice(["a.py", "src/b.rs", "README.md"]),
            "line": rng.randint(1, 500),
            "mode": rng.choice(["insert", "replace", "delete"]),
        }
        if rng.random() < 0.5:
            args["lines"] = [f"x = {i}" for i in range(rng.randint(0, 3))]
        if rng.random() < 0.5:
            args["dry_run"] = rng.random() < 0.5
        if rng.random() < 0.5:
            out.append((args, True))
            continue
        breakers = [
            lambda a: a.pop(rng.choice(["path", "line", "mode"])),
            lambda a: a.__setitem__("force", True),
            lambda a: a.__setitem__("line", str(a["line"])),
            lambda a: a.__setitem__("line", True),
            lambda a: a.__setitem__("line", 1.5),
            lambda a: a.__setitem__("line", rng.randint(-5, 0)),
            lambda a: a.__setitem__("mode", "append"),
            lambda a: a.__setitem__("path", ""),
            lambda a: a.__setitem__("lines", ["ok", 3]),
            lambda a: a.__setitem__("dry_run", "yes"),
        ]
        rng.choice(breakers)(args)
        out.append((args, False))
    return out


def history_at(log: Trajectory, seq: int) -> list[dict[str, Any]]:
    """The history the log derived before event ``seq`` was appended."""
    return Trajectory(log.events[:seq]).messages()
