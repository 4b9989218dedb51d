"""Token budgets for a growing agent context: counting, truncation and compaction.

Tokens are counted with a small word-level tokenizer (a word, a number or one punctuation mark
is one token), which is enough for budget arithmetic; a real deployment counts with the model's
own tokenizer. Two ways keep a conversation under a budget:

* :func:`truncate` drops the oldest steps, whole, until the messages fit, and keeps the task
  statement and the last ``keep_last`` steps intact;
* :func:`compact` replaces the oldest steps by a summary once the request passes a threshold
  (a fraction of the context window), and keeps a verbatim tail (another fraction). Its
  defaults, 0.8 and 0.16 of the window, are DeepSeek Harness's ``compaction-basic`` defaults
  at the pin. It writes a ``context/replace`` event, so the log still holds every original
  message and the derived history holds the summary.

A step is an assistant message and the tool results that answer it: cutting between them would
leave a call without a result, which model APIs reject.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from atlas.labkit.agents.trajectory import Trajectory

ROLE = "taught"

_WORD = re.compile(r"\w+|[^\w\s]")
MESSAGE_OVERHEAD = 4  # role and separator tokens of a chat template, per message

DEFAULT_THRESHOLD_RATIO = 0.8
DEFAULT_RETAIN_RATIO = 0.16


class ContextOverflow(RuntimeError):
    """The pinned messages and the protected tail alone exceed the budget."""


def tokenize(text: str) -> list[int]:
    """Token ids of ``text``: a stable 31-bit hash of each word or punctuation mark."""
    return [
        int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "little") >> 1
        for w in _WORD.findall(text)
    ]


def count_tokens(text: str) -> int:
    return len(_WORD.findall(text))


def message_tokens(m: dict[str, Any]) -> int:
    n = MESSAGE_OVERHEAD + count_tokens(m["content"])
    for call in m.get("tool_calls", []):
        n += count_tokens(call["name"]) + count_tokens(call["arguments"])
    return n


def request_tokens(request: dict[str, Any]) -> int:
    """Prompt tokens of one request: system prompt, tool schemas and history."""
    fixed = count_tokens(request["system"]) + count_tokens(json.dumps(request["tools"]))
    return fixed + sum(message_tokens(m) for m in request["messages"])


def steps(messages: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """``[start, end)`` index ranges of the units that may be dropped or summarised whole:
    an assistant message with the tool results after it, or a lone user message."""
    out: list[tuple[int, int]] = []
    for i, m in enumerate(messages):
        if m["role"] == "tool" and out:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def truncate(
    messages: list[dict[str, Any]], budget: int, keep_last: int = 2, pinned: int = 1
) -> list[dict[str, Any]]:
    """Drop the oldest whole steps until the messages fit in ``budget`` tokens.

    The first ``pinned`` messages (the task) and the last ``keep_last`` steps are never
    touched; a note says how many messages were dropped, so the model knows there is a gap."""
    head, rest = messages[:pinned], messages[pinned:]
    units = steps(rest)
    protected = units[-keep_last:] if keep_last else []
    droppable = units[: len(units) - len(protected)]
    total = sum(message_tokens(m) for m in messages)
    dropped = 0
    while total > budget and dropped < len(droppable):
        s, e = droppable[dropped]
        total -= sum(message_tokens(m) for m in rest[s:e])
        dropped += 1
    if dropped:
        cut = droppable[dropped - 1][1]
        note = {"role": "user", "content": f"[{cut} earlier messages were removed]"}
        total += message_tokens(note)
        rest = [note] + rest[cut:]
    if total > budget:
        raise ContextOverflow(f"{total} tokens after dropping {dropped} steps > {budget}")
    return head + rest


def extractive_summary(messages: list[dict[str, Any]], max_tokens: int) -> str:
    """A stand-in for a summarising model call: the first words of each message, in order,
    until ``max_tokens`` tokens are used."""
    words: list[str] = [f"Summary of {len(messages)} earlier messages:"]
    budget = max_tokens - count_tokens(words[0])
    for m in messages:
        for w in _WORD.findall(m["content"])[:12]:
            if budget <= 0:
                return " ".join(words)
            words.append(w)
            budget -= 1
    return " ".join(words)


def compact(
    log: Trajectory,
    window: int,
    overhead: int = 0,
    threshold_ratio: float = DEFAULT_THRESHOLD_RATIO,
    retain_ratio: float = DEFAULT_RETAIN_RATIO,
    summary_tokens: int = 256,
    summarize: Callable[[list[dict[str, Any]], int], str] = extractive_summary,
) -> bool:
    """Summarise the oldest steps of ``log`` when its request would pass the threshold.

    ``overhead`` is the request's fixed part (system prompt and tool schemas). The first
    message (the task) stays; a tail of whole steps of at most ``retain_ratio * window``
    tokens stays verbatim (at least the last step); everything between becomes one summary.
    Returns whether a ``context/replace`` event was appended."""
    threshold = int(window * threshold_ratio)
    retain = int(window * retain_ratio)
    nodes = log.nodes()
    messages = [m for _, _, m in nodes]
    if overhead + sum(message_tokens(m) for m in messages) <= threshold:
        return False
    units = steps(messages[1:])
    kept, tail = 0, 0
    for s, e in reversed(units):
        size = sum(message_tokens(m) for m in messages[1 + s : 1 + e])
        if kept and tail + size > retain:
            break
        kept, tail = kept + 1, tail + size
    head = units[: len(units) - kept]
    if not head:
        return False
    first, last = nodes[1 + head[0][0]][0], nodes[head[-1][1]][1]
    summary = summarize(messages[1 + head[0][0] : 1 + head[-1][1]], summary_tokens)
    log.append("context/replace", first=first, last=last, summary=summary)
    return True
