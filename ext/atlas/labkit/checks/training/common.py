"""Checking code that several pages of the training chapter share: ``training/activations.md``,
``training/checkpoints.md``, ``training/data.md``, ``training/index.md``,
``training/memory.md``, ``training/mixed-precision.md``, ``training/stability.md``.

The chapter's checks: Megatron-LM's own code at the pin, measuring tools.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

ROLE = "check"


UPSTREAM = "megatron"
_QUIET = __import__("logging").getLogger("megatron_at_pin")  # Megatron's log lines stay out of labs
_QUIET.addHandler(__import__("logging").NullHandler())
_QUIET.propagate = False


def tensor_bytes(tensors: Iterable[torch.Tensor]) -> int:
    """Bytes held by ``tensors`` (elements times element size, each tensor once)."""
    seen: set[tuple[int, tuple[int, ...]]] = set()
    total = 0
    for t in tensors:
        key = (t.data_ptr(), tuple(t.shape))
        if key in seen:
            continue
        seen.add(key)
        total += t.numel() * t.element_size()
    return total


class SavedBytes:
    """Count what autograd saves for backward inside a ``with`` block.

    Every tensor that an operation saves passes through the pack hook. Parameters (and views of
    them, such as a transposed weight) are not activations and are skipped; a tensor saved by
    two operations is counted once (same address, shape and strides). ``by_dtype`` splits the
    total by element type (a dropout mask is ``torch.bool``: one byte per element).
    """

    def __init__(self, params: Iterable[torch.Tensor] = ()) -> None:
        self._params = {p.untyped_storage().data_ptr() for p in params}
        self._seen: set[tuple[int, tuple[int, ...], tuple[int, ...]]] = set()
        self.total = 0
        self.by_dtype: dict[str, int] = {}
        self.tensors = 0
        self._hooks: Any = None

    def _pack(self, t: torch.Tensor) -> torch.Tensor:
        if t.untyped_storage().data_ptr() not in self._params:
            key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()))
            if key not in self._seen:
                self._seen.add(key)
                nbytes = t.numel() * t.element_size()
                self.total += nbytes
                name = str(t.dtype).removeprefix("torch.")
                self.by_dtype[name] = self.by_dtype.get(name, 0) + nbytes
                self.tensors += 1
        return t

    def __enter__(self) -> SavedBytes:
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hooks.__exit__(*exc)
