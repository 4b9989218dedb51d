"""Checks of the labs of ``serving/prefix-caching.md``.

The chapter's checks: Run nano-vllm's own pure-Python engine parts, read from its git objects at
the pin.
"""

from __future__ import annotations

import random
import types
from dataclasses import dataclass
from pathlib import Path

from atlas.labkit.checks.serving.common import BLOCK_MANAGER_FILES, UPSTREAM, _label
from atlas.labkit.pinned import package
from atlas.labkit.serving.prefix_cache import PrefixCache, RadixCache

ROLE = "check"


def load_block_manager(root: Path | None = None) -> types.SimpleNamespace:
    """nano-vllm's ``BlockManager``, ``Sequence`` and ``SamplingParams`` at the pin."""
    label = _label(root)
    mods = package(UPSTREAM, BLOCK_MANAGER_FILES, root=root)
    return types.SimpleNamespace(
        label=label,
        BlockManager=mods["nanovllm.engine.block_manager"].BlockManager,
        Sequence=mods["nanovllm.engine.sequence"].Sequence,
        SamplingParams=mods["nanovllm.sampling_params"].SamplingParams,
    )


def prefix_hits(
    ns: types.SimpleNamespace, trace: list, num_blocks: int, block_size: int
) -> list[int]:
    """Cached prompt tokens per request when nano-vllm's ``BlockManager`` serves ``trace``.

    ``trace`` holds ``prefix_cache.Request`` items, served one at a time as the engine would
    run them alone: ``can_allocate`` and ``allocate`` at admission, ``hash_blocks`` after the
    prefill and after each decode step (``may_append`` first), ``deallocate`` at the end.
    """
    ns.Sequence.block_size = block_size
    bm = ns.BlockManager(num_blocks, block_size)
    params = ns.SamplingParams(max_tokens=1, ignore_eos=True)
    cached: list[int] = []
    for req in trace:
        seq = ns.Sequence(list(req.prompt), params)
        hits = bm.can_allocate(seq)
        if hits == -1:
            raise ValueError(f"a prompt of {len(req.prompt)} tokens does not fit in the pool")
        bm.allocate(seq, hits)
        cached.append(seq.num_cached_tokens)
        seq.num_scheduled_tokens = seq.num_tokens - seq.num_cached_tokens
        for token in req.output:
            bm.hash_blocks(seq)
            seq.num_cached_tokens += seq.num_scheduled_tokens
            seq.append_token(token)
            if len(seq.completion_token_ids) == len(req.output):
                break
            if not bm.can_append(seq):
                raise ValueError("pool exhausted while decoding; use more blocks")
            bm.may_append(seq)
            seq.num_scheduled_tokens = 1
        bm.deallocate(seq)
    return cached


@dataclass(frozen=True)
class Request:
    """A prompt and the tokens the model will answer with (fixed, so runs are comparable)."""

    prompt: list[int]
    output: list[int]


def chat_trace(
    *,
    conversations: int = 24,
    turns: int = 4,
    system_prompts: int = 3,
    system_len: int = 300,
    user_len: tuple[int, int] = (20, 120),
    output_len: tuple[int, int] = (30, 200),
    vocab: int = 32000,
    seed: int = 0,
) -> list[Request]:
    """Multi-turn chats that share a few system prompts, interleaved round-robin.

    Turn ``k`` of a conversation sends the system prompt, every earlier user message and
    answer, and a new user message: the shared prefixes a chat server sees in practice.
    """
    rng = random.Random(seed)
    systems = [[rng.randrange(vocab) for _ in range(system_len)] for _ in range(system_prompts)]
    histories = [list(systems[c % system_prompts]) for c in range(conversations)]
    trace: list[Request] = []
    for _ in range(turns):
        for c in range(conversations):
            histories[c] += [rng.randrange(vocab) for _ in range(rng.randint(*user_len))]
            answer = [rng.randrange(vocab) for _ in range(rng.randint(*output_len))]
            trace.append(Request(list(histories[c]), answer))
            histories[c] += answer
    return trace


@dataclass(frozen=True)
class HitReport:
    prompt_tokens: int
    cached_tokens: int
    per_request: tuple[int, ...]

    @property
    def hit_rate(self) -> float:
        return self.cached_tokens / self.prompt_tokens


def run_block_cache(
    trace: list[Request], num_blocks: int, block_size: int, salts: list[int | None] | None = None
) -> HitReport:
    """Serve ``trace`` one request at a time through a ``PrefixCache``; count cached tokens.

    Prompt blocks are published after prefill; blocks filled while decoding are published as
    they fill, so the next turn of a chat can hit its own earlier answers. ``salts`` gives
    each request's cache salt (``None``: unsalted).
    """
    cache = PrefixCache(num_blocks, block_size)
    per_request: list[int] = []
    for i, req in enumerate(trace):
        salt = salts[i] if salts else None
        got = cache.allocate(req.prompt, salt)
        if got is None:
            raise ValueError(f"a prompt of {len(req.prompt)} tokens does not fit in the pool")
        table, cached = got
        per_request.append(cached)
        tokens = list(req.prompt)
        done = cache.commit(table, tokens, 0, salt)
        for t in req.output[:-1]:  # the last answer token is sampled, never fed back
            tokens.append(t)
            if not cache.grow(table, len(tokens) - 1):
                raise ValueError("pool exhausted while decoding; use more blocks")
            done = cache.commit(table, tokens, done, salt)
        cache.release(table)
    total = sum(len(r.prompt) for r in trace)
    return HitReport(total, sum(per_request), tuple(per_request))


def run_radix_cache(trace: list[Request]) -> HitReport:
    """The same trace through an unbounded token-level radix tree."""
    tree = RadixCache()
    per_request: list[int] = []
    for req in trace:
        per_request.append(tree.match(req.prompt))
        tree.insert(req.prompt + req.output[:-1])
    total = sum(len(r.prompt) for r in trace)
    return HitReport(total, sum(per_request), tuple(per_request))


def block_hits_closed_form(trace: list[Request], block_size: int) -> tuple[int, ...]:
    """Cached prompt tokens per request for a block cache that never evicts, derived from the
    token-level radix tree: a request reuses every full block inside the longest prefix it
    shares with what earlier requests computed, except the block of its last prompt token
    (which must run to produce logits): ``min(match // B, ceil(L / B) - 1) * B``."""
    matches = run_radix_cache(trace).per_request
    b = block_size
    return tuple(
        min(m // b, -(-len(r.prompt) // b) - 1) * b for r, m in zip(trace, matches, strict=True)
    )


def routed_hits(
    trace: list[Request], replicas: int, policy: str, block_size: int = 16, slack: float = 0.25
) -> tuple[int, list[int]]:
    """Route ``trace`` over ``replicas`` with :func:`..routing.route`, then serve each
    replica's share, in order, through its own never-evicting block cache. Returns the cached
    prompt tokens over all replicas and the requests each replica received."""
    from atlas.labkit.serving.routing import route

    chosen = route(trace, replicas, policy, slack)
    total = 0
    for r in range(replicas):
        share = [req for req, c in zip(trace, chosen, strict=True) if c == r]
        if share:
            total += run_block_cache(share, 10**5 // block_size, block_size).cached_tokens
    return total, [chosen.count(r) for r in range(replicas)]
