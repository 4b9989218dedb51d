"""A simulator of PyTorch's CUDA caching allocator: segments, blocks, pools, splitting, streams.

The allocator asks the driver for large *segments* (``cudaMalloc``) and carves them into
*blocks* that it hands to tensors. A freed block goes back to a *pool* of cached free blocks
instead of to the driver, so the next allocation of a similar size costs no driver call. The
rules restated here are those of ``c10/cuda/CUDACachingAllocator.cpp`` with the default
settings (no ``max_split_size_mb``, no ``roundup_power2_divisions``, no garbage collection):

- a request is rounded up to a multiple of 512 bytes;
- requests of at most 1 MiB come from the *small* pool, larger ones from the *large* pool;
- a new segment is 2 MiB for a small request, 20 MiB for a request under 10 MiB, and the
  request rounded up to 2 MiB otherwise;
- a request takes the smallest cached free block of its pool and stream that fits (lowest
  address on a tie), and splits it when the rest is at least 512 bytes (small pool) or more
  than 1 MiB (large pool);
- a freed block merges with free neighbours of its segment; ``empty_cache`` returns whole free
  segments to the driver;
- a block is reused only on the stream it was allocated on; a block that another stream used
  (``record_stream``) is held back until that stream's work at the time of the free is done.

With ``expandable=True`` the simulator follows ``expandable_segments:True``: one segment per
pool and stream that grows by mapping pages (2 MiB for the small pool, 20 MiB for the large
one) at its end, and splits any remainder of at least 512 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROLE = "taught"

KIB, MIB = 1024, 1024**2
MIN_BLOCK = 512  # every size is rounded up to a multiple of this
SMALL_SIZE = 1 * MIB  # largest request served by the small pool
SMALL_BUFFER = 2 * MIB  # segment size for small requests
LARGE_BUFFER = 20 * MIB  # segment size for requests between 1 MiB and 10 MiB
MIN_LARGE_ALLOC = 10 * MIB  # from here on, a request gets a segment of its own size
ROUND_LARGE = 2 * MIB  # ... rounded up to a multiple of this


def round_size(nbytes: int) -> int:
    """The size of the block a request of ``nbytes`` occupies."""
    return max(MIN_BLOCK, -(-nbytes // MIN_BLOCK) * MIN_BLOCK)


def segment_size(size: int) -> int:
    """Bytes asked of the driver when no cached block fits a (rounded) request."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-size // ROUND_LARGE) * ROUND_LARGE


@dataclass(eq=False)
class Block:
    """A contiguous range of one segment, free or handed out."""

    address: int
    size: int
    segment: int
    stream: int
    small: bool
    allocated: bool = False
    requested: int = 0
    stream_uses: set[int] = field(default_factory=set)
    prev: Block | None = None
    next: Block | None = None


class CachingAllocator:
    """The allocator of one device. Addresses are virtual: each segment gets a fresh range."""

    def __init__(self, expandable: bool = False) -> None:
        self.expandable = expandable
        self.free_blocks: list[Block] = []  # the two pools together; Block.small tells which
        self.segments: dict[int, Block] = {}  # segment id -> its first block
        self.segment_bytes: dict[int, int] = {}  # segment id -> mapped bytes
        self.pending: list[Block] = []  # freed, waiting for the streams that used them
        self._next_address = 0
        self.allocated = self.peak_allocated = self.reserved = self.peak_reserved = 0
        self.device_mallocs = 0

    # -- allocation -------------------------------------------------------------------------

    def malloc(self, nbytes: int, stream: int = 0) -> Block:
        size = round_size(nbytes)
        small = size <= SMALL_SIZE
        block = self._best_fit(size, small, stream)
        if block is None:
            block = self._grow(size, small, stream)
        self.free_blocks.remove(block)
        if self._should_split(block, size):
            rest = Block(block.address + size, block.size - size, block.segment, stream, small)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next, block.size = rest, size
            self.free_blocks.append(rest)
        block.allocated, block.requested = True, nbytes
        self.allocated += block.size
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return block

    def _best_fit(self, size: int, small: bool, stream: int) -> Block | None:
        fits = [
            b
            for b in self.free_blocks
            if b.small == small and b.stream == stream and b.size >= size
        ]
        return min(fits, key=lambda b: (b.size, b.address), default=None)

    def _should_split(self, block: Block, size: int) -> bool:
        rest = block.size - size
        if block.small or self.expandable:
            return rest >= MIN_BLOCK
        return rest > SMALL_SIZE

    def _grow(self, size: int, small: bool, stream: int) -> Block:
        if self.expandable:
            return self._expand(size, small, stream)
        nbytes = segment_size(size)
        seg = len(self.segment_bytes)
        block = Block(self._next_address, nbytes, seg, stream, small)
        self._next_address += nbytes
        self.segments[seg], self.segment_bytes[seg] = block, nbytes
        self.free_blocks.append(block)
        self._reserve(nbytes)
        return block

    def _expand(self, size: int, small: bool, stream: int) -> Block:
        """Map pages at the end of this pool's segment until its free tail holds ``size``."""
        page = SMALL_BUFFER if small else LARGE_BUFFER
        seg = next(
            (s for s, b in self.segments.items() if b.small == small and b.stream == stream), None
        )
        if seg is None:
            seg = len(self.segment_bytes)
            tail = Block(self._next_address, 0, seg, stream, small)
            self._next_address += 1 << 40  # a huge virtual range, mapped on demand
            self.segments[seg], self.segment_bytes[seg] = tail, 0
            self.free_blocks.append(tail)
        tail = self.segments[seg]
        while tail.next is not None:
            tail = tail.next
        if tail not in self.free_blocks:  # the segment ends in a block in use: add a free tail
            empty = Block(tail.address + tail.size, 0, seg, stream, small, prev=tail)
            tail.next = empty
            self.free_blocks.append(empty)
            tail = empty
        pages = -(-(size - tail.size) // page)
        tail.size += pages * page
        self.segment_bytes[seg] += pages * page
        self._reserve(pages * page)
        return tail

    def _reserve(self, nbytes: int) -> None:
        self.device_mallocs += 1
        self.reserved += nbytes
        self.peak_reserved = max(self.peak_reserved, self.reserved)

    # -- freeing ------------------------------------------------------------------------------

    def record_stream(self, block: Block, stream: int) -> None:
        """Mark ``block`` as used on ``stream``; its free then waits for that stream."""
        if stream != block.stream:
            block.stream_uses.add(stream)

    def free(self, block: Block) -> None:
        block.allocated = False
        self.allocated -= block.size
        if block.stream_uses:
            self.pending.append(block)  # an event is recorded on each stream that used it
        else:
            self._release_to_pool(block)

    def streams_done(self, stream: int) -> None:
        """The work ``stream`` had queued when the pending blocks were freed has finished."""
        for block in list(self.pending):
            block.stream_uses.discard(stream)
            if not block.stream_uses:
                self.pending.remove(block)
                self._release_to_pool(block)

    def _release_to_pool(self, block: Block) -> None:
        for neighbour in (block.prev, block.next):
            if neighbour is not None and not neighbour.allocated and neighbour in self.free_blocks:
                self.free_blocks.remove(neighbour)
                if neighbour is block.prev:
                    block.address, block.prev = neighbour.address, neighbour.prev
                    if block.prev is not None:
                        block.prev.next = block
                    if self.segments[block.segment] is neighbour:
                        self.segments[block.segment] = block
                else:
                    block.next = neighbour.next
                    if block.next is not None:
                        block.next.prev = block
                block.size += neighbour.size
        self.free_blocks.append(block)

    def empty_cache(self) -> None:
        """Return every segment that is entirely free to the driver."""
        for seg, head in list(self.segments.items()):
            if head.next is None and head in self.free_blocks:
                self.free_blocks.remove(head)
                self.reserved -= self.segment_bytes[seg]
                del self.segments[seg], self.segment_bytes[seg]

    # -- what a training run reads -------------------------------------------------------------

    def stats(self) -> dict[str, int]:
        """A few of ``torch.cuda.memory_stats()``'s keys, computed the same way."""
        split_free = sum(
            b.size for b in self.free_blocks if b.prev is not None or b.next is not None
        )
        return {
            "allocated_bytes.all.current": self.allocated,
            "allocated_bytes.all.peak": self.peak_allocated,
            "reserved_bytes.all.current": self.reserved,
            "reserved_bytes.all.peak": self.peak_reserved,
            "segment.all.current": len(self.segments),
            "inactive_split_bytes.all.current": split_free,
            "num_device_alloc": self.device_mallocs,
        }

    def largest_free_block(self) -> int:
        return max((b.size for b in self.free_blocks), default=0)


# -- traces: the same list of steps for the simulator and for a GPU ---------------------------

Step = tuple[str, str, int]  # ("alloc", name, nbytes) or ("free", name, 0)

TRACE_KEYS = (
    "allocated_bytes.all.current",
    "reserved_bytes.all.current",
    "inactive_split_bytes.all.current",
    "segment.all.current",
)


def replay(trace: list[Step], expandable: bool = False) -> dict[str, int]:
    """Run ``trace`` through the simulator and return the counters of ``TRACE_KEYS``.

    The same trace can be replayed on a GPU with real tensors
    (``atlas.labkit.checks.pytorch.allocator.cuda_replay``), which is what makes the
    simulator's numbers checkable against PyTorch's allocator rather than against itself.
    """
    mem = CachingAllocator(expandable=expandable)
    live: dict[str, Block] = {}
    for op, name, nbytes in trace:
        if op == "alloc":
            live[name] = mem.malloc(nbytes)
        else:
            mem.free(live.pop(name))
    stats = mem.stats()
    return {key: stats[key] for key in TRACE_KEYS}


def fragmentation_trace(mib: int = MIB) -> list[Step]:
    """Twelve 6 MiB tensors, every other one freed, then four 11 MiB tensors."""
    trace: list[Step] = [("alloc", f"a{i}", 6 * mib) for i in range(12)]
    trace += [("free", f"a{i}", 0) for i in range(1, 12, 2)]
    trace += [("alloc", f"b{i}", 11 * mib) for i in range(4)]
    return trace


def growing_batch_trace(layers: int = 8, mib: int = MIB) -> list[Step]:
    """``layers`` activations of 12 MiB, all freed, then as many of 14 MiB, all freed."""
    trace: list[Step] = []
    for size in (12, 14):
        trace += [("alloc", f"{size}-{i}", size * mib) for i in range(layers)]
        trace += [("free", f"{size}-{i}", 0) for i in range(layers)]
    return trace
