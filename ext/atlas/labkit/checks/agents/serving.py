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
            radix.insert((prompt + output)[:-1])  # the last sampled token was never run
        else:
            table, cached = cache.allocate(prompt)
            hits.append(cached)
            seq = list(prompt)
            for tok in output:  # decode: one slot per token, then publish the full blocks
                if not cache.grow(table, len(seq)):
                    raise RuntimeError("the pool is too small")
                seq.append(tok)
            cache.commit(table, seq[:-1], cached // block)  # the last token has no KV
            cache.release(table)
        history += output
    return hits


def nano_vllm_cached_tokens(s: Session, block: int = 16) -> tuple[str, list[int]]:
    """Cached tokens per step, measured by nano-vllm's own ``Scheduler`` and ``BlockManager``
    at the pin (``checks/serving/common.py::load_scheduler``): each step's prompt is added as
    a ``Sequence`` that decodes exactly the session's output tokens, and the number of tokens
    the block manager found cached (``num_cached_tokens`` after its first allocation) is read.
    Returns the pin's label and the hits. Independent of :func:`measured_cached_tokens`, which
    runs the book's own caches, and of the closed form :func:`cached_tokens`."""
    from atlas.labkit.checks.serving.common import SchedulerConfig, load_scheduler

    ns = load_scheduler()
    total = s.prefix + sum(s.new) + sum(s.out)
    config = SchedulerConfig(kvcache_block_size=block, num_kvcache_blocks=2 * total // block + 8)
    ns.Sequence.block_size = block
    sched = ns.Scheduler(config)
    rng = random.Random(1)
    history = [rng.randrange(1, 1 << 30) for _ in range(s.prefix)]
    hits = []
    for t in range(len(s.new)):
        history += [rng.randrange(1, 1 << 30) for _ in range(s.new[t])]
        output = [rng.randrange(1, 1 << 30) for _ in range(s.out[t])]
        seq = ns.Sequence(list(history), ns.SamplingParams(max_tokens=s.out[t], ignore_eos=True))
        sched.add(seq)
        first = True
        while not sched.is_finished():
            seqs, is_prefill = sched.schedule()
            if first:
                hits.append(seq.num_cached_tokens)
                first = False
            sched.postprocess(seqs, [output[seq.num_completion_tokens]], is_prefill)
        history += output
    return ns.label, hits
