"""Checks of the labs of ``agents/serving.md``.

The chapter's checks: Checks, scripted models, synthetic sessions and upstream readers for the
agents labs.
"""

from __future__ import annotations

import random

from atlas.labkit.agents.sessions import Session

ROLE = "check"


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
