"""Checks of the labs of ``speculative/draft-methods.md``.

The chapter's checks: seeded distributions, Monte Carlo estimates and their bounds, the plain
decoding reference, and upstream functions run from their source at the pins (EAGLE's
verification and tree buffers, Megatron-LM's verification and KV rewind).
"""

from __future__ import annotations

import copy
import random
from collections import Counter

from atlas.labkit.speculative.model import TinyLM

ROLE = "check"


def early_exit(model: TinyLM, layers: int) -> TinyLM:
    """A self-speculative draft: the target's own first ``layers`` blocks, then its head."""
    d = copy.copy(model)
    d.blocks = model.blocks[:layers]
    return d


# --- suffix decoding: a brute-force matcher and two workloads ---------------------------------


def _follows(texts: list[list[int]], s: list[int]) -> Counter:
    """The tokens that followed each occurrence of ``s`` in ``texts``, counted by a scan."""
    n = len(s)
    return Counter(t[i + n] for t in texts for i in range(len(t) - n) if t[i : i + n] == s)


def brute_match(texts: list[list[int]], context: list[int], max_pattern: int) -> int:
    """The longest suffix of ``context`` (at most ``max_pattern``) that occurs in ``texts``
    with a token after it, by trying every length and every position."""
    for p in range(min(max_pattern, len(context)), 0, -1):
        if _follows(texts, context[-p:]):
            return p
    return 0


def brute_draft(
    texts: list[list[int]], context: list[int], p: int, budget: int, min_prob: float
) -> tuple[list[int], float]:
    """The greedy frequency walk of :func:`greedy_walk`, recounting every step by a scan."""
    s, out, prob = context[len(context) - p :], [], 1.0
    while len(out) < budget:
        c = _follows(texts, s + out)
        if not c:
            break
        tok = min(c, key=lambda t: (-c[t], t))
        if prob * c[tok] / sum(c.values()) < min_prob:
            break
        prob *= c[tok] / sum(c.values())
        out.append(tok)
    return out, prob


def random_stream(n: int, vocab: int, rng: random.Random) -> list[int]:
    return [rng.randrange(vocab) for _ in range(n)]


def edit_requests(
    turns: int, file_len: int, vocab: int, edits: int, seed: int
) -> list[tuple[list[int], list[int]]]:
    """An agent editing a file: each request's prompt is a fixed instruction, the current file
    and a short new instruction; its output is a fixed tool-call header, the file with
    ``edits`` tokens changed, and a fixed footer. The next request sees the edited file."""
    rng = random.Random(seed)
    system, header, footer = (random_stream(m, vocab, rng) for m in (10, 6, 4))
    file = random_stream(file_len, vocab, rng)
    requests = []
    for _ in range(turns):
        edited = list(file)
        for i in rng.sample(range(file_len), edits):
            edited[i] = rng.randrange(vocab)
        prompt = system + file + random_stream(3, vocab, rng)
        requests.append((prompt, header + edited + footer))
        file = edited
    return requests


def random_requests(
    turns: int, length: int, vocab: int, seed: int
) -> list[tuple[list[int], list[int]]]:
    """Requests with nothing to copy: prompt and output drawn uniformly."""
    rng = random.Random(seed)
    return [
        (random_stream(length, vocab, rng), random_stream(length, vocab, rng)) for _ in range(turns)
    ]


def suffix_trie_agrees(trials: int, seed: int = 0) -> dict[str, int]:
    """Build a :class:`SuffixTrie` over several documents (random streams over a small
    vocabulary, or edit requests), then for random contexts compare its match length and its
    draft with :func:`brute_match` and :func:`brute_draft` on the same documents. Half the
    contexts end with a stretch copied from a document, so that long matches occur."""
    from atlas.labkit.speculative.suffix import SuffixTrie, greedy_walk

    rng = random.Random(seed)
    cases = bad = long_matches = drafted = 0
    for trial in range(trials):
        if trial % 2:
            docs = [random_stream(rng.randint(20, 80), rng.randint(3, 8), rng) for _ in range(3)]
        else:
            docs = [p + o for p, o in edit_requests(3, 30, 12, 3, rng.randrange(10**6))]
        max_pattern, budget = rng.randint(2, 7), rng.randint(1, 9)
        trie = SuffixTrie(max_pattern + budget)
        for d in docs:
            trie.new_document()
            trie.extend(d)
        vocab = 1 + max(max(d) for d in docs)
        for _ in range(10):
            context = random_stream(rng.randint(1, 6), vocab, rng)
            if rng.random() < 0.5:
                d = rng.choice(docs)
                i = rng.randrange(len(d))
                context += d[max(0, i - rng.randint(1, 12)) : i + 1]
            min_prob = rng.choice([0.0, 0.05, 0.3])
            p, node = trie.match(context, max_pattern)
            ours = (p, *greedy_walk(node, budget, min_prob)) if p else (0, [], 1.0)
            q = brute_match(docs, context, max_pattern)
            theirs = (q, *brute_draft(docs, context, q, budget, min_prob)) if q else (0, [], 1.0)
            cases += 1
            long_matches += p >= 4
            drafted += len(ours[1]) > 0
            bad += ours[:2] != theirs[:2] or abs(ours[2] - theirs[2]) > 1e-12
    return {"cases": cases, "long_matches": long_matches, "drafted": drafted, "disagreements": bad}


def replay(
    requests: list[tuple[list[int], list[int]]], make_drafter, k: int
) -> tuple[float, float]:
    """Mean tokens per target pass, and drafted tokens per pass, when a target whose greedy
    output is each request's output is served with greedy verification: at each step the
    drafter proposes from the accepted text, the longest prefix equal to the true
    continuation is kept, plus one target token.
    ``make_drafter(history)`` builds a drafter given the earlier requests' full texts."""
    tokens = passes = drafted = 0
    for r, (prompt, output) in enumerate(requests):
        drafter = make_drafter([p + o for p, o in requests[:r]])
        j = 0
        while j < len(output):
            draft = drafter.propose(prompt + output[:j], k)
            drafted += len(draft)
            kept = 0
            while kept < len(draft) and j + kept < len(output) and draft[kept] == output[j + kept]:
                kept += 1
            step = min(kept + 1, len(output) - j)
            j, tokens, passes = j + step, tokens + step, passes + 1
    return tokens / passes, drafted / passes
