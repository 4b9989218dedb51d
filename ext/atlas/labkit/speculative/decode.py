"""Greedy speculative decoding: a drafter proposes, the target checks, the cache rolls back.

The target keeps one KV cache. Each step feeds it the pending token (the last one chosen,
not yet cached) followed by the draft, in one causal pass; position ``i`` of the output is
the target's greedy choice after input ``i``. The longest prefix of the draft that equals
those choices is kept, the target's choice after it is appended as a bonus, and the cache is
cut back to the pending token plus the kept drafts.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from atlas.labkit.speculative.model import KVCache, TinyLM

ROLE = "taught"


class ModelDrafter:
    """A smaller model that drafts greedily, with a cache of its own."""

    def __init__(self, model: TinyLM):
        self.model, self.cache = model, KVCache()

    def propose(self, seq: list[int], k: int) -> list[int]:
        # Feed what the draft cache lacks (accepted tokens it has not seen), then draft k.
        todo = seq[len(self.cache) :]
        positions = torch.arange(len(self.cache), len(seq))
        logits = self.model(torch.tensor(todo), positions, self.cache)
        out = [int(logits[-1].argmax())]
        while len(out) < k:
            pos = torch.tensor([len(seq) + len(out) - 1])
            logits = self.model(torch.tensor(out[-1:]), pos, self.cache)
            out.append(int(logits[-1].argmax()))
        return out

    def rollback(self, valid: int) -> None:
        """Only the first ``valid`` tokens of the sequence are certain; forget the rest."""
        self.cache.truncate(min(len(self.cache), valid))


class PromptLookupDrafter:
    """No model at all: find the latest earlier occurrence of the sequence's last ``n`` tokens
    (longest ``n`` first) and propose the tokens that followed it.

    ``history`` holds earlier requests' full texts (prompt and output). When it is given, a
    suffix that the current sequence does not contain is also looked up there, newest request
    first: the cross-request cache of suffix decoding, searched by a scan instead of a suffix
    tree (the same matches, found in linear rather than suffix-length time)."""

    def __init__(
        self, max_ngram: int = 3, min_ngram: int = 1, history: list[list[int]] | None = None
    ):
        self.max_ngram, self.min_ngram = max_ngram, min_ngram
        self.history = list(history or [])

    def propose(self, seq: list[int], k: int) -> list[int]:
        for n in range(min(self.max_ngram, len(seq) - 1), self.min_ngram - 1, -1):
            suffix = seq[-n:]
            # The current sequence first (its match must leave a token after it), then the
            # earlier requests, newest first.
            for text, end in [(seq, len(seq) - 1)] + [(t, len(t)) for t in reversed(self.history)]:
                for start in range(end - n, -1, -1):
                    if text[start : start + n] == suffix:
                        return text[start + n : start + n + k]
        return []

    def rollback(self, valid: int) -> None:
        pass


@dataclass
class SpecStats:
    target_passes: int = 0
    drafted: int = 0
    accepted: int = 0


def speculative_greedy(
    target: TinyLM, drafter, prompt: list[int], max_new: int, gamma: int
) -> tuple[list[int], SpecStats]:
    """Generate ``max_new`` tokens after ``prompt``; returns them and the step statistics."""
    cache, stats = KVCache(), SpecStats()
    logits = target(torch.tensor(prompt), torch.arange(len(prompt)), cache)  # prefill
    seq = list(prompt) + [int(logits[-1].argmax())]
    while len(seq) - len(prompt) < max_new:
        draft = drafter.propose(seq, gamma)
        start = len(seq) - 1  # position of the pending token
        block = torch.tensor([seq[-1]] + draft)
        logits = target(block, torch.arange(start, start + len(block)), cache)
        choice = logits.argmax(-1).tolist()  # choice[i]: the target's token after block[i]
        kept = 0
        while kept < len(draft) and draft[kept] == choice[kept]:
            kept += 1
        seq += draft[:kept] + [choice[kept]]
        cache.truncate(start + 1 + kept)  # the pending token and the kept drafts
        drafter.rollback(len(seq) - 1)
        stats.target_passes += 1
        stats.drafted += len(draft)
        stats.accepted += kept
    return seq[len(prompt) : len(prompt) + max_new], stats
