"""Checks, scripted models, synthetic sessions and upstream readers for the agents labs.

Nothing here is taught: the pages show the modules next to this one. The harness supplies a
scripted model and a small coding task, a generator of tool arguments whose validity is known
by construction, the runaway commands the sandbox lab confines, synthetic agent sessions, and
readers that take figures from DeepSeek Harness's and AgentENV's files at their pins (read
from the git objects, never from a checkout).
"""

from __future__ import annotations

import copy
import functools
import json
import random
import re
import sys
import tomllib
from typing import Any

from atlas.labkit.agents.context import count_tokens
from atlas.labkit.agents.loop import Tool, ToolRegistry, run_turn
from atlas.labkit.agents.sessions import Session
from atlas.labkit.agents.trajectory import Trajectory

# ---------------------------------------------------------------------------------------------
# Upstream files at the pins
# ---------------------------------------------------------------------------------------------
from atlas.labkit.pinned import read  # noqa: E402


def _ts_number(text: str, name: str) -> float:
    match = re.search(rf"const {name} = ([0-9.]+)", text)
    if match is None:
        raise LookupError(f"no `const {name} = <number>` in the file (did the pin move?)")
    return float(match.group(1))


@functools.cache
def dsh_defaults() -> dict[str, float]:
    """DeepSeek Harness's compaction and scheduling defaults, read from its TypeScript."""
    config, _ = read("deepseek-harness",
                              "packages/compaction/compaction-basic/src/config.ts")
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


# ---------------------------------------------------------------------------------------------
# A scripted model and a small coding task
# ---------------------------------------------------------------------------------------------


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
    reg.register(Tool(
        "read_file", "Read a file of the repository.",
        {"type": "object", "properties": {"path": path}, "required": ["path"],
         "additionalProperties": False},
        lambda path: files[path]))

    def write_file(path: str, content: str) -> str:
        files[path] = content
        return f"wrote {len(content)} characters to {path}"

    reg.register(Tool(
        "write_file", "Replace a file's content.",
        {"type": "object", "properties": {"path": path, "content": {"type": "string"}},
         "required": ["path", "content"], "additionalProperties": False},
        write_file))

    def run_tests(pattern: str = "test_", verbose: bool = False) -> str:
        ok = "return a + b" in files.get("calc.py", "")
        return "1 passed" if ok else "1 failed: test_add expected 5, got -1"

    reg.register(Tool(
        "run_tests", "Run the test suite.",
        {"type": "object", "properties": {"pattern": {"type": "string"},
                                          "verbose": {"type": "boolean"}},
         "additionalProperties": False},
        run_tests))
    return reg


def bugfix_task() -> tuple[ToolRegistry, ScriptedModel, dict[str, str]]:
    """A four-step session: run the tests, read the file (and one malformed call), fix it,
    run the tests again, then answer."""
    files = {"calc.py": "def add(a, b):\n    return a - b\n"}
    script = [
        {"content": "Run the tests first.", "tool_calls": [call("c1", "run_tests")]},
        {"content": "Read the code.", "tool_calls": [
            call("c2", "read_file", path="calc.py"),
            {"id": "c3", "name": "read_file", "arguments": '{"file": "calc.py"}'}]},
        {"content": "Fix the operator.", "tool_calls": [
            call("c4", "write_file", path="calc.py",
                 content="def add(a, b):\n    return a + b\n")]},
        {"content": "Check.", "tool_calls": [call("c5", "run_tests", verbose=True)]},
        {"content": "Fixed: add() subtracted; it now adds and the test passes.",
         "tool_calls": []},
    ]
    return repo_tools(files), ScriptedModel(script), files


def shape(messages: list[dict[str, Any]]) -> str:
    """A transcript's roles in order: ``U`` user, ``A`` assistant, ``T`` tool, ``S`` summary."""
    return "".join("S" if m.get("summary") else m["role"][0].upper() for m in messages)


# ---------------------------------------------------------------------------------------------
# Tool arguments whose validity is known by construction
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# A long session for the context labs
# ---------------------------------------------------------------------------------------------


def words(n: int, tag: str) -> str:
    """Text of exactly ``n`` tokens (one word each) that names its step."""
    return " ".join([tag] + [f"w{i}" for i in range(n - 1)])


def long_session(steps: int, output_tokens: list[int]) -> tuple[ToolRegistry, ScriptedModel]:
    """A session of ``steps`` steps: each calls ``cat`` once, whose output has the given
    token count, and the last answers without a call."""
    reg = ToolRegistry()
    sizes = dict(enumerate(output_tokens))
    reg.register(Tool("cat", "Print a file.",
                      {"type": "object", "properties": {"i": {"type": "integer"}},
                       "required": ["i"]},
                      lambda i: words(sizes[i], f"out{i}")))
    script = [{"content": f"step {i}", "tool_calls": [call(f"c{i}", "cat", i=i)]}
              for i in range(steps - 1)]
    script.append({"content": "done", "tool_calls": []})
    return reg, ScriptedModel(script)


def step_tokens(i: int, output: int) -> int:
    """Tokens one step of :func:`long_session` adds to the history (assistant + result)."""
    assistant = 4 + count_tokens(f"step {i}") + count_tokens("cat")
    assistant += count_tokens(json.dumps({"i": i}))
    return assistant + 4 + output


# ---------------------------------------------------------------------------------------------
# Runaway tool commands for the sandbox lab
# ---------------------------------------------------------------------------------------------

CPU_HOG = "while True: pass"
SLEEPER = "import time; time.sleep(60)"
MEMORY_HOG = """
def peak():
    for line in open('/proc/self/status'):
        if line.startswith('VmPeak:'):
            return int(line.split()[1]) * 1024
keep = []
print(peak(), flush=True)
while True:
    keep.append(bytearray(16 * 2**20))
    print(peak(), flush=True)
"""
FILE_WRITER = """
with open('out.bin', 'wb') as f:
    for _ in range(64):
        f.write(b'x' * 2**20)
        f.flush()
"""


def python(code: str) -> list[str]:
    return [sys.executable, "-S", "-c", code]


# ---------------------------------------------------------------------------------------------
# Multi-turn sessions for the serving labs
# ---------------------------------------------------------------------------------------------


def coding_session(turns: int, seed: int = 0, prefix: int = 3000) -> Session:
    """A synthetic coding-agent session: a fixed prefix (system prompt and tool schemas),
    tool results of 100 to 2,000 tokens, and assistant steps of 50 to 400 tokens."""
    rng = random.Random(seed)
    new = tuple([rng.randint(200, 600)] + [rng.randint(100, 2000) for _ in range(turns - 1)])
    out = tuple(rng.randint(50, 400) for _ in range(turns))
    return Session(prefix, new, out)


def measured_cached_tokens(s: Session, block: int, stamp_every_step: bool = False) -> list[int]:
    """Cached tokens per step, measured by running the session's token ids through the
    serving chapter's caches: the block-granular prefix cache (chain hashes of full blocks,
    nano-vllm's rules) for ``block > 1``, the token-granular radix tree for ``block == 1``.
    With ``stamp_every_step`` the first prefix token changes at every step, as a timestamp in
    a system prompt would."""
    from atlas.labkit.serving.prefix_cache import PrefixCache, RadixCache

    rng = random.Random(1)
    prefix = [rng.randrange(1, 1 << 30) for _ in range(s.prefix)]
    history: list[int] = []
    total = s.prefix + sum(s.new) + sum(s.out)
    cache = PrefixCache(num_blocks=2 * total // block + 8, block_size=block)
    radix = RadixCache()
    hits = []
    for t in range(len(s.new)):
        history += [rng.randrange(1, 1 << 30) for _ in range(s.new[t])]
        head = [t + 1] + prefix[1:] if stamp_every_step else prefix
        prompt = head + history
        output = [rng.randrange(1, 1 << 30) for _ in range(s.out[t])]
        if block == 1:
            hits.append(radix.match(prompt))
            radix.insert(prompt + output)
        else:
            table, cached = cache.allocate(prompt)
            hits.append(cached)
            seq = list(prompt)
            for tok in output:  # decode: one slot per token, then publish the full blocks
                if not cache.grow(table, len(seq)):
                    raise RuntimeError("the pool is too small")
                seq.append(tok)
            cache.commit(table, seq, cached // block)
            cache.release(table)
        history += output
    return hits


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


def fixed_summary(messages: list[dict[str, Any]], max_tokens: int) -> str:
    """A stand-in summariser whose output is always exactly ``max_tokens`` tokens long."""
    return words(max_tokens, f"summary-of-{len(messages)}")


def compaction_schedule(steps: int, g: int, window: int, fixed: int, task: int, summary: int,
                        threshold_ratio: float, retain_ratio: float) -> list[int]:
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


def run_session(model: Any, registry: ToolRegistry, task: str, **kw: Any) -> Trajectory:
    """Drive one turn of the chapter's loop and return its log (for labs whose page teaches
    something else than the loop)."""
    reason, log = run_turn(model, registry, task, **kw)
    log.reason = reason  # type: ignore[attr-defined]
    return log


def history_at(log: Trajectory, seq: int) -> list[dict[str, Any]]:
    """The history the log derived before event ``seq`` was appended."""
    return Trajectory(log.events[:seq]).messages()


def burst_targets(low: int, high: int, rounds: int, burst: int | None = None) -> list[int]:
    """Refill targets of a warm pool after each of ``rounds`` bursts, by the doubling formula.

    Each round starts with the pool refilled to its target ``P``; a burst takes ``b``
    resources (``burst``, or all ``P`` when None). The ``j``-th acquisition leaves
    ``max(P - j, 0)`` idle and doubles the target when that is below ``low``, so a round
    doubles it ``d = max(0, b - max(0, P - low))`` times, capped at ``high``."""
    target, out = min(low, high), []
    for _ in range(rounds):
        p = target
        b = p if burst is None else burst
        d = max(0, b - max(0, p - low))
        target = min(high, max(target, low, 1) * 2**d)
        out.append(target)
    return out
