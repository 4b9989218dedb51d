"""How a ``PYTORCH_ALLOC_CONF`` string is divided between PyTorch's allocator parsers.

The string is read by a parser shared by every accelerator
(``c10::CachingAllocator::AcceleratorAllocatorConfig``), which owns the caching allocator's
generic settings (``max_split_size_mb``, ``expandable_segments``, ...). Keys that only mean
something on one device, ``backend`` among them, belong to that device's parser, registered
as a hook together with the set of keys it claims (``CUDAAllocatorConfig::getKeys()`` for
CUDA). This module restates that division, so that a reader can see which parser judges which
pair, and which pairs no parser judges at all in a given build.
"""

from __future__ import annotations

ROLE = "taught"

SHARED_KEYS: frozenset[str] = frozenset(
    {
        "max_split_size_mb",
        "max_non_split_rounding_mb",
        "garbage_collection_threshold",
        "roundup_power2_divisions",
        "expandable_segments",
        "pinned_use_background_threads",
        "large_segment_size_mb",
    }
)
"""Keys of the shared parser: the settings of the caching allocator on any accelerator."""

CUDA_KEYS: frozenset[str] = frozenset(
    {
        "backend",
        "release_lock_on_cudamalloc",
        "pinned_use_cuda_host_register",
        "release_lock_on_hipmalloc",
        "pinned_use_hip_host_register",
        "graph_capture_record_stream_reuse",
        "pinned_reserve_segment_size_mb",
        "pinned_num_register_threads",
        "per_process_memory_fraction",
        "pinned_free_catch_all",
        "throw_on_cudamalloc_oom",
    }
)
"""Keys the CUDA parser registers (the header spells two of them as split literals)."""


def pairs(conf: str) -> list[tuple[str, str]]:
    """Split ``conf`` into ``(key, value)`` pairs at the commas outside brackets.

    ``roundup_power2_divisions`` takes a bracketed list whose own commas and colons
    (``[64:8,256:4,>:1]``) must not end the pair, as PyTorch's tokenizer also treats them.
    """
    out: list[tuple[str, str]] = []
    depth, start = 0, 0
    for i, ch in enumerate(conf + ","):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            item = conf[start:i].strip()
            if item:
                key, _, value = item.partition(":")
                out.append((key.strip(), value.strip()))
            start = i + 1
    return out


def split_alloc_conf(conf: str) -> dict[str, dict[str, str]]:
    """The pairs of ``conf`` grouped by the parser that judges them.

    ``"shared"``: the accelerator-wide parser checks the value. ``"cuda"``: only CUDA's parser
    reads it, so a build without CUDA (no hook registered) accepts any value. ``"unknown"``:
    a key neither parser claims, a typo for instance, which the shared parser passes over
    and leaves to the device's parser (a CPU build has none, so nobody refuses it).
    """
    groups: dict[str, dict[str, str]] = {"shared": {}, "cuda": {}, "unknown": {}}
    for key, value in pairs(conf):
        group = "shared" if key in SHARED_KEYS else "cuda" if key in CUDA_KEYS else "unknown"
        groups[group][key] = value
    return groups
