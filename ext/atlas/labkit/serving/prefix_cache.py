"""Prefix caching over chains of full blocks, and a token-level radix tree to compare with.

A full block's identity is the hash of its tokens *and* of the hash of the block before it,
so equal hashes mean equal prefixes, not just equal blocks. The cache maps hash to block id.
A finished sequence's blocks go back to the free list but keep their hash until reused, so a
later request with the same prefix finds them; allocation takes the oldest free block first,
which makes the free list an eviction order (least recently freed goes first).

The rules copy nano-vllm's ``BlockManager`` at the pin: only blocks before the one holding
the last prompt token can hit (the last token is always computed, it yields the logits), and
a sequence frees its blocks tail first, so the tail of a prefix is evicted before its head.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import deque
from dataclasses import dataclass, field

ROLE = "taught"


def chain_hash(tokens: list[int], prev: int | None) -> int:
    """64-bit hash of one block's tokens chained to the previous block's hash."""
    h = hashlib.blake2b(digest_size=8)
    if prev is not None:
        h.update(prev.to_bytes(8, "little"))
    h.update(array("q", tokens).tobytes())
    return int.from_bytes(h.digest(), "little")


def block_hashes(tokens: list[int], block_size: int) -> list[int]:
    """Chain hashes of every full block of ``tokens``; a partial tail block has none."""
    out: list[int] = []
    prev = None
    for i in range(len(tokens) // block_size):
        prev = chain_hash(tokens[i * block_size : (i + 1) * block_size], prev)
        out.append(prev)
    return out


@dataclass
class _Block:
    ref_count: int = 0
    hash: int | None = None
    tokens: list[int] = field(default_factory=list)


class PrefixCache:
    """A block pool whose full blocks are found again by their chain hash."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.block_size = block_size
        self.blocks = [_Block() for _ in range(num_blocks)]
        self.by_hash: dict[int, int] = {}
        self.free: deque[int] = deque(range(num_blocks))

    def _take_free(self) -> int:
        block_id = self.free.popleft()
        block = self.blocks[block_id]
        if block.hash is not None and self.by_hash.get(block.hash) == block_id:
            del self.by_hash[block.hash]  # evicted: its content is about to be overwritten
        block.ref_count, block.hash, block.tokens = 1, None, []
        return block_id

    def _lookup(self, tokens: list[int], salt: int | None = None) -> list[int]:
        """Block ids of the cached prefix of ``tokens`` (never the block of the last token).

        ``salt`` (a tenant's cache salt, a LoRA adapter's id, a hash of an image) starts the
        chain in place of "no previous block", so equal tokens under different salts never
        share a block."""
        hits: list[int] = []
        prev = salt
        last_block = (len(tokens) - 1) // self.block_size
        for i in range(last_block):
            chunk = tokens[i * self.block_size : (i + 1) * self.block_size]
            prev = chain_hash(chunk, prev)
            block_id = self.by_hash.get(prev)
            if block_id is None or self.blocks[block_id].tokens != chunk:
                break
            hits.append(block_id)
        return hits

    def allocate(self, tokens: list[int], salt: int | None = None) -> tuple[list[int], int] | None:
        """Block table for a new prompt and its cached token count; None if it cannot fit."""
        hits = self._lookup(tokens, salt)
        need_new = -(-len(tokens) // self.block_size) - len(hits)
        revived = sum(1 for b in hits if self.blocks[b].ref_count == 0)
        if len(self.free) < need_new + revived:
            return None
        table: list[int] = []
        for block_id in hits:
            block = self.blocks[block_id]
            if block.ref_count == 0:
                self.free.remove(block_id)
            block.ref_count += 1
            table.append(block_id)
        table.extend(self._take_free() for _ in range(need_new))
        return table, len(hits) * self.block_size

    def commit(
        self, table: list[int], tokens: list[int], done: int, salt: int | None = None
    ) -> int:
        """Publish the hashes of full blocks ``done..`` of ``tokens`` once their KV exists.

        Returns the new number of published blocks; the chain continues from block
        ``done - 1``'s hash (or from ``salt``), so each block is hashed once over a sequence's
        life.
        """
        prev = self.blocks[table[done - 1]].hash if done else salt
        full = len(tokens) // self.block_size
        for i in range(done, full):
            chunk = tokens[i * self.block_size : (i + 1) * self.block_size]
            prev = chain_hash(chunk, prev)
            block = self.blocks[table[i]]
            block.hash, block.tokens = prev, chunk
            self.by_hash[prev] = table[i]
        return max(done, full)

    def grow(self, table: list[int], num_tokens: int) -> bool:
        """Make room for token number ``num_tokens`` (0-based); False if the pool is empty."""
        if num_tokens % self.block_size:
            return True
        if not self.free:
            return False
        table.append(self._take_free())
        return True

    def release(self, table: list[int]) -> None:
        """Drop a finished sequence's references, tail block first."""
        for block_id in reversed(table):
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                self.free.append(block_id)
        table.clear()


class RadixCache:
    """Token-granular prefix matching (SGLang's radix tree, without eviction), to compare."""

    def __init__(self) -> None:
        self.root: dict[int, dict] = {}

    def match(self, tokens: list[int]) -> int:
        """Length of the longest cached prefix of ``tokens``, capped to leave one token."""
        node, n = self.root, 0
        for t in tokens[:-1]:
            if t not in node:
                break
            node, n = node[t], n + 1
        return n

    def insert(self, tokens: list[int]) -> None:
        node = self.root
        for t in tokens:
            node = node.setdefault(t, {})
