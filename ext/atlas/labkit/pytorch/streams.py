"""Streams, events and CUDA graphs, modelled on the CPU.

:class:`Timeline` is the ordering model of CUDA streams: each stream runs its operations one
after another in the order the host queued them; an event recorded on a stream completes when
the work queued before it completes; a stream told to wait for an event starts its next
operation no earlier. The host never waits unless it synchronises. Durations are given, so the
timeline says when each operation runs and what overlaps.

:class:`GraphRecorder` imitates what stream capture records: during capture it runs a function
once and remembers every operator with the tensors it read and wrote; a replay runs the same
operators on the same tensors (the same addresses), and nothing else. Python code that ran
during capture (a branch, a ``print``, a new tensor bound to a name) does not run again. Like
capture on a GPU, it refuses to copy a value to the host in the middle of a capture.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

ROLE = "taught"


@dataclass
class Op:
    stream: str
    name: str
    start: float
    end: float
    reads: tuple[tuple[int, int], ...] = ()  # (address, bytes) ranges
    writes: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Event:
    stream: str
    time: float  # when the work queued before the record completes


@dataclass
class Timeline:
    """Queued work on named streams, with events between them."""

    tails: dict[str, float] = field(default_factory=dict)  # when each stream becomes idle
    ops: list[Op] = field(default_factory=list)

    def launch(
        self,
        stream: str,
        name: str,
        duration: float,
        reads: tuple[tuple[int, int], ...] = (),
        writes: tuple[tuple[int, int], ...] = (),
    ) -> Op:
        """Queue an operation: it starts when everything queued before it on ``stream`` ends."""
        start = self.tails.get(stream, 0.0)
        op = Op(stream, name, start, start + duration, reads, writes)
        self.tails[stream] = op.end
        self.ops.append(op)
        return op

    def record(self, stream: str) -> Event:
        """``torch.cuda.Event.record(stream)``: marks the current end of ``stream``'s queue."""
        return Event(stream, self.tails.get(stream, 0.0))

    def wait(self, stream: str, event: Event) -> None:
        """``stream.wait_event(event)``: later work on ``stream`` starts after the event."""
        self.tails[stream] = max(self.tails.get(stream, 0.0), event.time)

    def wait_stream(self, stream: str, other: str) -> None:
        """``stream.wait_stream(other)``: a record on ``other`` and a wait on ``stream``."""
        self.wait(stream, self.record(other))

    def makespan(self) -> float:
        return max((op.end for op in self.ops), default=0.0)


def overlapped_backward(buckets: int, compute: float, comm: float) -> Timeline:
    """Backward in ``buckets`` pieces, each bucket's gradient all-reduced on a second stream.

    The compute stream produces bucket ``i``'s gradients, records an event; the communication
    stream waits for that event and reduces the bucket while the compute stream goes on with
    the next one. The optimizer step must then wait for the last reduction.
    """
    tl = Timeline()
    for i in range(buckets):
        tl.launch("compute", f"backward {i}", compute)
        tl.wait("comm", tl.record("compute"))
        tl.launch("comm", f"all-reduce {i}", comm)
    tl.wait_stream("compute", "comm")
    tl.launch("compute", "optimizer", 0.0)
    return tl


class CaptureError(RuntimeError):
    """An operation that is not allowed while a graph is being captured."""


_SYNCING = {torch.ops.aten._local_scalar_dense.default}  # .item(), bool(t), t.tolist(), ...


class GraphRecorder(TorchDispatchMode):
    """Capture the operators a function runs; replay them on the same tensors.

    ``with recorder: out = fn(static_input)`` records. ``recorder.replay()`` re-runs each
    recorded operator with the arguments it had (the same tensor objects, hence the same
    memory) and copies each result into the tensor that the capture produced, so intermediate
    and output tensors are overwritten in place, as a replayed CUDA graph overwrites its
    private pool. To feed new data, copy it into the static input tensor before replaying.
    """

    def __init__(self) -> None:
        super().__init__()
        self.recorded: list[tuple[Any, tuple[Any, ...], dict[str, Any], Any]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        if func in _SYNCING:
            raise CaptureError(f"{func} copies a device value to the host during capture")
        out = func(*args, **kwargs)
        self.recorded.append((func, args, kwargs, out))
        return out

    def replay(self) -> None:
        for func, args, kwargs, out in self.recorded:
            fresh = func(*args, **kwargs)
            for dst, src in zip(tree_flatten(out)[0], tree_flatten(fresh)[0], strict=True):
                if isinstance(dst, torch.Tensor) and dst.data_ptr() != src.data_ptr():
                    dst.copy_(src)  # same address as at capture; views and in-place ops alias


def capture(
    fn: Callable[..., torch.Tensor], *static_inputs: torch.Tensor
) -> tuple[GraphRecorder, torch.Tensor]:
    """Warm up once (outside the recorder), then capture ``fn`` on the static inputs."""
    fn(*static_inputs)
    recorder = GraphRecorder()
    with recorder:
        out = fn(*static_inputs)
    return recorder, out
