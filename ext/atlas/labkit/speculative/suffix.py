"""Suffix decoding: draft from a suffix trie of earlier text, as long as the match deserves.

A depth-bounded suffix trie holds every substring of up to ``depth`` tokens of the texts added
to it, one node per distinct substring, and counts how many times each occurred. Two questions
a drafter asks are then walks from the root:

- how long is the longest suffix of the current text that occurred before *with a token after
  it*? (the match length ``p``);
- after that suffix, which token followed most often, and after that one, which next? (the
  draft, greedy on the counts).

Suffix decoding keeps one trie per request (its prompt and what it has generated) and one over
earlier requests' outputs, and lets the match length set how far it speculates: a long match
is a strong hint that the text is being repeated, a short one is a weak hint. Here the draft
may grow to ``floor(factor * p)`` tokens (capped at ``max_spec``) and stops earlier where the
product of the conditional frequencies along its path falls below ``min_prob``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROLE = "taught"


@dataclass
class Node:
    """One distinct substring: how many times it occurred, and its one-token extensions."""

    count: int = 0
    depth: int = 0
    children: dict[int, Node] = field(default_factory=dict)


class SuffixTrie:
    """Counts of every substring of at most ``depth`` tokens of the documents added.

    Appending a token extends each open suffix (the substrings that end at the previous token
    and are shorter than ``depth``) by that token, so adding ``n`` tokens costs ``n * depth``
    steps: the depth bound is what keeps memory and time linear, as in suffix decoding's
    trees, at the price of matches longer than ``depth`` looking like matches of ``depth``.
    """

    def __init__(self, depth: int):
        self.depth, self.root = depth, Node()
        self._open: list[Node] = [self.root]  # the nodes of suffixes ending at the last token

    def new_document(self) -> None:
        """Start a new text: no substring may span the boundary."""
        self._open = [self.root]

    def append(self, token: int) -> None:
        nxt = [self.root]
        for node in self._open:
            child = node.children.get(token)
            if child is None:
                child = node.children[token] = Node(depth=node.depth + 1)
            child.count += 1
            if child.depth < self.depth:
                nxt.append(child)
        self._open = nxt

    def extend(self, tokens: list[int]) -> None:
        for t in tokens:
            self.append(t)

    def match(self, context: list[int], max_pattern: int) -> tuple[int, Node]:
        """The longest suffix of ``context`` (at most ``max_pattern`` tokens) that occurred with
        a token after it; returns its length ``p`` (0 if none) and its node."""
        for p in range(min(max_pattern, len(context)), 0, -1):
            node = self.root
            for t in context[-p:]:
                node = node.children.get(t)
                if node is None:
                    break
            if node is not None and node.children:
                return p, node
        return 0, self.root


def greedy_walk(node: Node, budget: int, min_prob: float) -> tuple[list[int], float]:
    """Greedy walk from ``node``: the most frequent next token (the smallest id on a tie), at
    most ``budget`` tokens, while the path's probability (the product of each step's share of
    its parent's continuations) stays at least ``min_prob``. Returns the tokens and that
    probability, the draft's score."""
    out: list[int] = []
    prob = 1.0
    while len(out) < budget and node.children:
        total = sum(c.count for c in node.children.values())
        token, child = max(node.children.items(), key=lambda kv: (kv[1].count, -kv[0]))
        if prob * child.count / total < min_prob:
            break
        prob *= child.count / total
        out.append(token)
        node = child
    return out, prob


class SuffixDrafter:
    """Suffix decoding's drafter: a trie over this request's text and one over earlier
    requests' texts; the longer match wins (this request's on a tie), and the draft may be
    ``floor(factor * p)`` tokens long for a match of ``p`` tokens, capped at ``max_spec``.

    Called like :class:`PromptLookupDrafter`: ``propose(seq, k)`` with the accepted text, which
    only grows; the request trie is brought up to date with the tokens it has not seen."""

    def __init__(
        self,
        history: list[list[int]] | None = None,
        max_pattern: int = 8,
        max_spec: int = 16,
        factor: float = 1.0,
        min_prob: float = 0.1,
    ):
        self.max_pattern, self.max_spec = max_pattern, max_spec
        self.factor, self.min_prob = factor, min_prob
        depth = max_pattern + max_spec  # a full-length match still has room to continue
        self.request, self.seen = SuffixTrie(depth), 0
        self.past = SuffixTrie(depth)
        for text in history or []:
            self.past.new_document()
            self.past.extend(text)

    def propose(self, seq: list[int], k: int) -> list[int]:
        self.request.extend(seq[self.seen :])
        self.seen = len(seq)
        p, node = self.request.match(seq, self.max_pattern)
        p_past, node_past = self.past.match(seq, self.max_pattern)
        if p_past > p:
            p, node = p_past, node_past
        budget = min(k, self.max_spec, int(self.factor * p))
        return greedy_walk(node, budget, self.min_prob)[0] if p else []

    def rollback(self, valid: int) -> None:
        pass  # the drafter only ever sees accepted text
