"""Checks of the labs of ``post-training/agentic.md``.

The chapter's checks: upstream code at the pins, fakes, toy models.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from atlas.labkit.checks.post_training.common import upstream_defs

ROLE = "check"


@functools.cache
def _slime_trajectory() -> dict[str, Any]:
    import dataclasses
    import enum

    return upstream_defs(
        "slime",
        "slime/agent/trajectory.py",
        ("TurnRecord", "_common_prefix_len", "DriftKind", "_SampleBuilder"),
        {"dataclasses": dataclasses, "enum": enum, "Any": Any, "Sample": None},
    )


def slime_trajectory(
    turns: list[tuple[list[int], list[int], list[float]]],
) -> tuple[list[int], list[int], list[float]]:
    """slime's ``_SampleBuilder`` at the pin fed the same turns (prompt ids, output ids,
    output log-probs): the response region it would train on (tokens, loss mask, log-probs)."""
    t = _slime_trajectory()
    builder = t["_SampleBuilder"](fork_threshold=10**9)
    for prompt, output, logprobs in turns:
        turn = t["TurnRecord"](
            prompt_ids=prompt, output_ids=output, finish_reason="stop", output_log_probs=logprobs
        )
        kind = builder.classify_token_drift(turn)
        builder.append_turn(turn, kind)
    start = builder.leading_prompt_len
    return builder.tokens[start:], builder.loss_mask[start:], builder.logprobs[start:]


def slime_drift_kind(held_turns, prompt: list[int], output: list[int]) -> str:
    """How slime's builder classifies a turn whose prompt does not extend what it holds."""
    t = _slime_trajectory()
    builder = t["_SampleBuilder"](fork_threshold=64)
    for p, o, lp in held_turns:
        turn = t["TurnRecord"](
            prompt_ids=p, output_ids=o, finish_reason="stop", output_log_probs=lp
        )
        builder.append_turn(turn, builder.classify_token_drift(turn))
    turn = t["TurnRecord"](prompt_ids=prompt, output_ids=output, finish_reason="stop")
    return builder.classify_token_drift(turn).value


def scripted_episode(
    seed: int = 0, turns: int = 3
) -> list[tuple[list[int], list[int], list[float]]]:
    """A tool-using episode as the engine sees it: a first prompt, then per turn the model's
    output (ending in a tool call), the tool's result and the template tokens that open the
    next assistant turn appended to form the next prompt. Token ids are random."""
    g = torch.Generator().manual_seed(seed)

    def ids(n: int) -> list[int]:
        return torch.randint(100, 1000, (n,), generator=g).tolist()

    prompt = ids(12)
    out = []
    for _ in range(turns):
        output = ids(int(torch.randint(3, 9, (1,), generator=g)))
        logprobs = (-torch.rand(len(output), generator=g)).tolist()
        out.append((list(prompt), output, logprobs))
        prompt = prompt + output + ids(int(torch.randint(4, 10, (1,), generator=g)))
    return out
