"""Distributed checkpoints: every rank saves its shards with their place in the global tensor,
and any layout can load them back.

A :class:`ShardedTensor` says where a rank's local tensor sits in the global one: its global
shape and offset, as Megatron-LM's ``dist_checkpointing.mapping.ShardedTensor`` does. Saving
writes each *main replica* (``replica_id == 0``) once, under a name that records its offset;
loading asks for a box of the global tensor and copies in the overlap of every saved piece.
Because a piece is found by coordinates, not by the rank that wrote it, a checkpoint saved at
tensor-parallel size 2 loads at size 4 (or 1, or 8) with no conversion step.

:class:`AsyncSave` copies the shards to host memory at once and writes the files in a
background thread; the checkpoint counts only once :meth:`AsyncSave.finalize` has written the
metadata file, last, so a crash during the write leaves no checkpoint that looks complete.

:func:`resume_state` and :func:`restore_state` gather what a bit-exact resume needs besides
the weights: the optimizer's state, every random-number generator, and the data position.
"""

from __future__ import annotations

import copy
import json
import os
import random
import threading
from dataclasses import dataclass, replace
from typing import Any

import numpy
import torch

ROLE = "taught"

METADATA = "metadata.json"


@dataclass(frozen=True)
class ShardedTensor:
    """A local tensor and its place in a global tensor (``data`` None in a load request)."""

    key: str
    data: torch.Tensor | None
    global_shape: tuple[int, ...]
    global_offset: tuple[int, ...]
    axis_fragmentations: tuple[int, ...]
    replica_id: int = 0

    @classmethod
    def from_rank_offsets(
        cls, key: str, data: torch.Tensor, *rank_offsets: tuple[int, int, int], replica_id: int = 0
    ) -> ShardedTensor:
        """``(axis, rank_on_axis, fragments)``: the global tensor is cut into ``fragments``
        equal pieces along ``axis`` and ``data`` is piece number ``rank_on_axis``."""
        shape, offset, frags = list(data.shape), [0] * data.ndim, [1] * data.ndim
        for axis, index, fragments in rank_offsets:
            if not 0 <= index < fragments:
                raise ValueError(f"{key}: piece {index} of {fragments} along axis {axis}")
            shape[axis] = data.shape[axis] * fragments
            offset[axis] = data.shape[axis] * index
            frags[axis] = fragments
        return cls(key, data, tuple(shape), tuple(offset), tuple(frags), replica_id)

    @property
    def local_shape(self) -> tuple[int, ...]:
        return tuple(
            g // f for g, f in zip(self.global_shape, self.axis_fragmentations, strict=True)
        )

    def without_data(self) -> ShardedTensor:
        return replace(self, data=None)


def _piece_name(key: str, offset: tuple[int, ...]) -> str:
    return f"{key}@{'_'.join(map(str, offset))}.pt"


def save_sharded(shards: list[ShardedTensor], directory: str, rank: int) -> list[str]:
    """Write this rank's main replicas; return the files written. Rank 0 adds the metadata
    (every key's global shape) after all ranks are done: call :func:`finalize` then."""
    os.makedirs(directory, exist_ok=True)
    written = []
    for sh in shards:
        if sh.replica_id != 0:
            continue  # another rank holds the same values and saves them
        name = _piece_name(sh.key, sh.global_offset)
        torch.save(sh.data.detach().clone(), os.path.join(directory, name))
        written.append(name)
    return written


def finalize(shards: list[ShardedTensor], directory: str, rank: int) -> None:
    """Write the metadata file (rank 0). Call after every rank's :func:`save_sharded`."""
    if rank == 0:
        meta = {sh.key: list(sh.global_shape) for sh in shards}
        tmp = os.path.join(directory, METADATA + ".tmp")
        with open(tmp, "w") as f:
            json.dump(meta, f)
        os.replace(tmp, os.path.join(directory, METADATA))  # appears whole or not at all


def _pieces(directory: str, key: str) -> list[tuple[tuple[int, ...], str]]:
    out = []
    for name in os.listdir(directory):
        stem, _, offset = name.removesuffix(".pt").rpartition("@")
        if stem == key and name.endswith(".pt"):
            out.append((tuple(int(x) for x in offset.split("_")), name))
    return out


def load_sharded(request: ShardedTensor, directory: str) -> torch.Tensor:
    """The box of ``request.key`` that ``request`` describes, assembled from saved pieces.

    For each saved piece, the overlap with the requested box along every axis is
    ``[max(starts), min(ends))``; where it is non-empty, that block is copied in. Every element
    of the box must be covered exactly once.
    """
    meta_path = os.path.join(directory, METADATA)
    if not os.path.exists(meta_path):
        raise FileNotFoundError(f"{directory} has no {METADATA}: the checkpoint is incomplete")
    with open(meta_path) as f:
        saved_shape = tuple(json.load(f)[request.key])
    if saved_shape != request.global_shape:
        raise ValueError(f"{request.key}: saved {saved_shape}, requested {request.global_shape}")
    want_lo = request.global_offset
    want_hi = tuple(o + n for o, n in zip(want_lo, request.local_shape, strict=True))
    out: torch.Tensor | None = None
    covered = torch.zeros(request.local_shape, dtype=torch.int32)
    for offset, name in _pieces(directory, request.key):
        piece = torch.load(os.path.join(directory, name))
        if out is None:
            out = torch.empty(request.local_shape, dtype=piece.dtype)
        lo = [max(a, b) for a, b in zip(want_lo, offset, strict=True)]
        hi = [min(a, b + n) for a, b, n in zip(want_hi, offset, piece.shape, strict=True)]
        if any(low >= high for low, high in zip(lo, hi, strict=True)):
            continue
        dst = tuple(slice(low - w, high - w) for low, high, w in zip(lo, hi, want_lo, strict=True))
        src = tuple(slice(low - o, high - o) for low, high, o in zip(lo, hi, offset, strict=True))
        out[dst] = piece[src]
        covered[dst] += 1
    if not bool((covered == 1).all()):
        raise ValueError(f"{request.key}: saved pieces do not cover the request exactly once")
    return out


def mlp_sharded_state_dict(
    fc1_weight: torch.Tensor,
    fc1_bias: torch.Tensor,
    fc2_weight: torch.Tensor,
    fc2_bias: torch.Tensor,
    tp: int,
    rank: int,
) -> list[ShardedTensor]:
    """The sharded state of a tensor-parallel MLP on TP rank ``rank`` of ``tp``, given that
    rank's local tensors: ``fc1`` is column-parallel (weight and bias split along axis 0),
    ``fc2`` row-parallel (weight split along axis 1; its bias is whole on every rank, so only
    rank 0's copy is the main replica)."""
    return [
        ShardedTensor.from_rank_offsets("fc1.weight", fc1_weight, (0, rank, tp)),
        ShardedTensor.from_rank_offsets("fc1.bias", fc1_bias, (0, rank, tp)),
        ShardedTensor.from_rank_offsets("fc2.weight", fc2_weight, (1, rank, tp)),
        ShardedTensor.from_rank_offsets("fc2.bias", fc2_bias, replica_id=rank),
    ]


class AsyncSave:
    """Save in the background: copy to host now, write files in a thread, finalize later."""

    def __init__(self, shards: list[ShardedTensor], directory: str, rank: int) -> None:
        # The copy is the only part training waits for: afterwards the live tensors may change.
        self.snapshot = [replace(sh, data=sh.data.detach().to("cpu", copy=True)) for sh in shards]
        self.directory, self.rank = directory, rank
        self.files: list[str] = []
        self._thread = threading.Thread(target=self._write, daemon=True)
        self._thread.start()

    def _write(self) -> None:
        self.files = save_sharded(self.snapshot, self.directory, self.rank)

    def done(self) -> bool:
        return not self._thread.is_alive()

    def finalize(self, barrier: Any = None) -> None:
        """Wait for the write; after ``barrier`` (all ranks written), write the metadata."""
        self._thread.join()
        if barrier is not None:
            barrier()
        finalize(self.snapshot, self.directory, self.rank)


def resume_state(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, consumed: int, iteration: int
) -> dict[str, Any]:
    """Everything a resumed run needs to continue exactly where this one stopped."""
    return {
        "model": {k: v.clone() for k, v in model.state_dict().items()},
        "optimizer": copy.deepcopy(optimizer.state_dict()),  # a snapshot, not live references
        "rng": {
            "python": random.getstate(),
            "numpy": numpy.random.get_state(),
            "torch": torch.get_rng_state(),
        },
        "consumed_samples": consumed,
        "iteration": iteration,
    }


def restore_state(
    state: dict[str, Any], model: torch.nn.Module, optimizer: torch.optim.Optimizer
) -> tuple[int, int]:
    """Load a :func:`resume_state` dict; returns ``(consumed_samples, iteration)``."""
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    random.setstate(state["rng"]["python"])
    numpy.random.set_state(state["rng"]["numpy"])
    torch.set_rng_state(state["rng"]["torch"])
    return state["consumed_samples"], state["iteration"]
