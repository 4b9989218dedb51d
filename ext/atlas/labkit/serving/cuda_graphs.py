"""CUDA-graph batch buckets for decode: which graphs an engine captures, which one a batch uses.

A captured graph has fixed shapes, so an engine captures one graph per bucket of batch sizes
and pads each decode batch up to the smallest bucket that holds it. nano-vllm's rule (in
``ModelRunner.capture_cudagraph`` and ``run_model`` at its pin) is restated here: buckets 1, 2,
4, 8, then every multiple of 16 up to ``min(max_num_seqs, 512)``; a batch above 512 runs
eagerly, without a graph.
"""

from __future__ import annotations

ROLE = "taught"

EAGER_ABOVE = 512  # decode batches larger than this run without a graph


def graph_batch_sizes(max_num_seqs: int) -> list[int]:
    """The batch sizes captured: ``[1, 2, 4, 8]`` and the multiples of 16 up to
    ``min(max_num_seqs, 512)``."""
    largest = min(max_num_seqs, EAGER_ABOVE)
    return [1, 2, 4, 8] + list(range(16, largest + 1, 16))


def replay_size(batch: int, sizes: list[int]) -> int | None:
    """The graph a decode batch of ``batch`` sequences replays: the smallest captured size at
    least as large. ``None`` when the batch runs eagerly (above 512) or when no captured graph
    is large enough (a ``max_num_seqs`` that is not a multiple of 16 leaves such a gap)."""
    if batch > EAGER_ABOVE:
        return None
    return next((size for size in sizes if size >= batch), None)


def padding(batch: int, sizes: list[int]) -> int:
    """Rows of padding a decode batch carries through its graph (0 when it runs eagerly)."""
    size = replay_size(batch, sizes)
    return 0 if size is None else size - batch
