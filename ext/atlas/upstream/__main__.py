"""``python -m atlas.upstream COMMAND``: the maintainer's tools for upstream citations.

Each command lives in the module that owns its job; this file only dispatches.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "check": ("atlas.upstream.check", "verify every citation of the book against git objects"),
    "lock": ("atlas.upstream.check", "refresh upstreams.lock from the git objects"),
    "fetch": ("atlas.upstream.fetch.cli", "fetch the objects the book cites (partial clones)"),
    "drift": ("atlas.upstream.drift.cli", "report which citations would move, change or break"),
    "bump": ("atlas.upstream.drift.cli", "move a pin and carry every citation across"),
    "review": ("atlas.upstream.drift.review", "accept, keep or skip what a bump left behind"),
}


def usage() -> str:
    lines = ["usage: python -m atlas.upstream COMMAND [ARGS]", "", "commands:"]
    lines += [f"  {name:<6} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(usage(), file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return int(module.main(argv) or 0)


if __name__ == "__main__":
    sys.exit(main())
