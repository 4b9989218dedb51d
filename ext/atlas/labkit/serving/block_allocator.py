"""A KV block allocator with reference counts and copy-on-write.

Blocks are the unit of KV memory. Several sequences may point at one physical block: the
prompt blocks of parallel samples of one request, or a shared prefix. A block's reference
count says how many block tables hold it; it returns to the free list when the count reaches
zero. A sequence that must write into a block others also hold first gets a private copy
(copy-on-write); the allocator returns the (source, destination) pair so the caller copies
the KV data, as vLLM's block manager hands ``blocks_to_copy`` to its workers.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

ROLE = "taught"


class OutOfBlocks(RuntimeError):
    """No free block is left: the scheduler must wait or preempt a sequence."""


@dataclass
class SeqBlocks:
    """A sequence's block table and how many tokens it holds."""

    table: list[int] = field(default_factory=list)
    num_tokens: int = 0


class BlockAllocator:
    """Fixed pool of ``num_blocks`` blocks of ``block_size`` token slots each."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        if num_blocks <= 0 or block_size <= 0:
            raise ValueError("num_blocks and block_size must be positive")
        self.block_size = block_size
        self.ref_count = [0] * num_blocks
        self.free: deque[int] = deque(range(num_blocks))

    @property
    def num_free(self) -> int:
        return len(self.free)

    @property
    def num_used(self) -> int:
        return len(self.ref_count) - len(self.free)

    def _take(self) -> int:
        if not self.free:
            raise OutOfBlocks(f"all {len(self.ref_count)} blocks are in use")
        block = self.free.popleft()
        self.ref_count[block] = 1
        return block

    def _release(self, block: int) -> None:
        if self.ref_count[block] <= 0:
            raise ValueError(f"block {block} released more often than it was taken")
        self.ref_count[block] -= 1
        if self.ref_count[block] == 0:
            self.free.append(block)

    def allocate(self, num_tokens: int) -> SeqBlocks:
        """Blocks for a new sequence of ``num_tokens`` tokens (all or nothing)."""
        need = -(-num_tokens // self.block_size)
        if need > self.num_free:
            raise OutOfBlocks(f"{need} blocks needed, {self.num_free} free")
        return SeqBlocks([self._take() for _ in range(need)], num_tokens)

    def fork(self, seq: SeqBlocks) -> SeqBlocks:
        """A second sequence that shares every block of ``seq`` (parallel sampling)."""
        for block in seq.table:
            self.ref_count[block] += 1
        return SeqBlocks(list(seq.table), seq.num_tokens)

    def append_token(self, seq: SeqBlocks) -> tuple[int, int] | None:
        """Make room for one more token of ``seq``; return a (src, dst) copy if one is needed.

        A full last block means a fresh block. A partly filled last block that another
        sequence also holds must not be written: the writer takes a private copy of it and
        drops its reference to the shared one.
        """
        copy: tuple[int, int] | None = None
        offset = seq.num_tokens % self.block_size
        if offset == 0:
            seq.table.append(self._take())
        elif self.ref_count[seq.table[-1]] > 1:
            shared = seq.table[-1]
            private = self._take()
            self._release(shared)
            seq.table[-1] = private
            copy = (shared, private)
        seq.num_tokens += 1
        return copy

    def free_seq(self, seq: SeqBlocks) -> None:
        """Drop ``seq``'s references; blocks nobody holds go back to the free list."""
        for block in reversed(seq.table):
            self._release(block)
        seq.table.clear()
        seq.num_tokens = 0

    def check(self, live: list[SeqBlocks]) -> None:
        """Invariant: each block's count equals the number of live tables that hold it."""
        expected = [0] * len(self.ref_count)
        for seq in live:
            for block in seq.table:
                expected[block] += 1
        if expected != self.ref_count:
            raise AssertionError("reference counts disagree with the live block tables")
        if sorted(self.free) != [b for b, n in enumerate(expected) if n == 0]:
            raise AssertionError("free list disagrees with the reference counts")
