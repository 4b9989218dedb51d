"""A toy model of RDMA verbs, and of a transfer engine that slices requests over NICs.

What it keeps of the real thing (the InfiniBand verbs as ``libibverbs`` exposes them):

- memory is registered first; a :class:`MemoryRegion` has a local key (``lkey``) for the
  owner's own work requests and a remote key (``rkey``) that a peer must present, and access
  flags that say whether peers may read or write it;
- a reliable-connected :class:`QueuePair` executes its send queue *in order*; each work request
  is one of WRITE, READ (one-sided: the target's CPU posts nothing and sees no completion),
  SEND (two-sided: it consumes a receive request the target posted, or fails with
  receiver-not-ready), or an atomic FETCH_ADD on 8 bytes;
- completions go to a :class:`CompletionQueue` that the owner polls;
- a queue pair starts in RESET and is moved to INIT, RTR and RTS by :meth:`QueuePair.modify`,
  each transition with the attributes the specification requires of a reliable-connected QP
  (:data:`QP_TRANSITIONS`); it may take receive requests from INIT and send from RTS.

What it leaves out: wire formats, retransmission, memory ordering as a GPU observes it.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import deque
from dataclasses import dataclass, field

import torch

ROLE = "taught"

LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC = 1, 2, 4, 8
_keys = itertools.count(0x1000)


#: The legal transitions of a reliable-connected QP on the way up, and the attributes each must
#: set (the ``IBV_QP_*`` mask bits of ``ibv_modify_qp``, without the prefix): RESET->INIT names
#: the port and what peers may do; INIT->RTR the peer (address vector, QP number, its first
#: packet sequence number) and the receive side's limits; RTR->RTS the send side's.
QP_TRANSITIONS: dict[tuple[str, str], frozenset[str]] = {
    ("RESET", "INIT"): frozenset({"STATE", "PKEY_INDEX", "PORT", "ACCESS_FLAGS"}),
    ("INIT", "RTR"): frozenset(
        {"STATE", "AV", "PATH_MTU", "DEST_QPN", "RQ_PSN", "MAX_DEST_RD_ATOMIC", "MIN_RNR_TIMER"}
    ),
    ("RTR", "RTS"): frozenset(
        {"STATE", "SQ_PSN", "TIMEOUT", "RETRY_CNT", "RNR_RETRY", "MAX_QP_RD_ATOMIC"}
    ),
}


class QpStateError(ValueError):
    """What ``ibv_modify_qp`` or a post answers with ``EINVAL``: a transition that is not the
    next one, a required attribute missing, or a request posted in a state that refuses it."""


@dataclass
class MemoryRegion:
    buf: torch.Tensor  # uint8, the registered bytes
    access: int
    lkey: int = field(default_factory=lambda: next(_keys))
    rkey: int = field(default_factory=lambda: next(_keys))


@dataclass
class Completion:
    wr_id: int
    opcode: str
    status: str  # "SUCCESS", "REM_ACCESS_ERR", "RNR_RETRY_EXC_ERR"
    byte_len: int = 0


@dataclass
class CompletionQueue:
    entries: deque[Completion] = field(default_factory=deque)

    def poll(self) -> list[Completion]:
        out = list(self.entries)
        self.entries.clear()
        return out


class Nic:
    """One node's RDMA device: its registered regions, looked up by ``rkey`` from the wire."""

    def __init__(self) -> None:
        self.regions: dict[int, MemoryRegion] = {}

    def reg_mr(self, buf: torch.Tensor, access: int) -> MemoryRegion:
        mr = MemoryRegion(buf.view(torch.uint8).view(-1), access)
        self.regions[mr.rkey] = mr
        return mr


@dataclass
class WorkRequest:
    wr_id: int
    opcode: str  # WRITE, READ, SEND, FETCH_ADD
    local: MemoryRegion | None = None
    offset: int = 0
    length: int = 0
    remote_offset: int = 0
    rkey: int = 0
    add: int = 0  # FETCH_ADD operand


class QueuePair:
    """A reliable-connected queue pair: posted requests run in order, one at a time."""

    def __init__(self, nic: Nic, cq: CompletionQueue) -> None:
        self.nic, self.cq = nic, cq
        self.send_queue: deque[WorkRequest] = deque()
        self.recv_queue: deque[WorkRequest] = deque()
        self.peer: QueuePair | None = None
        self.state = "RESET"

    def modify(self, state: str, attrs: set[str], peer: QueuePair | None = None) -> None:
        """One ``ibv_modify_qp`` up the state machine; ``peer`` stands for the address vector
        and QP number that RTR needs (exchanged out of band in a real program)."""
        need = QP_TRANSITIONS.get((self.state, state))
        if need is None:
            raise QpStateError(f"no transition {self.state} -> {state}")
        if missing := need - attrs:
            raise QpStateError(f"{self.state} -> {state} needs {sorted(missing)}")
        if state == "RTR":
            if peer is None:
                raise QpStateError("RTR needs the peer's address and QP number")
            self.peer = peer
        self.state = state

    def connect(self, peer: QueuePair) -> None:
        """Both QPs through RESET -> INIT -> RTR -> RTS, as after the out-of-band exchange."""
        for target in ("INIT", "RTR", "RTS"):
            for a, b in ((self, peer), (peer, self)):
                a.modify(target, set(QP_TRANSITIONS[(a.state, target)]), b)

    def post_send(self, wr: WorkRequest) -> None:
        if self.state != "RTS":
            raise QpStateError(f"post_send in {self.state}: a QP sends only in RTS")
        self.send_queue.append(wr)

    def post_recv(self, wr: WorkRequest) -> None:
        if self.state == "RESET":
            raise QpStateError("post_recv in RESET: receive requests are taken from INIT on")
        self.recv_queue.append(wr)

    def step(self) -> bool:
        """Execute the oldest posted request; False when the send queue is empty."""
        if not self.send_queue:
            return False
        wr, peer = self.send_queue.popleft(), self.peer
        assert peer is not None, "post to a connected queue pair"
        src = None if wr.local is None else wr.local.buf[wr.offset : wr.offset + wr.length]
        if wr.opcode == "SEND":
            if not peer.recv_queue:  # nothing posted to land in: receiver not ready
                self.cq.entries.append(Completion(wr.wr_id, "SEND", "RNR_RETRY_EXC_ERR"))
                return True
            rwr = peer.recv_queue.popleft()
            rwr.local.buf[rwr.offset : rwr.offset + wr.length] = src
            peer.cq.entries.append(Completion(rwr.wr_id, "RECV", "SUCCESS", wr.length))
            self.cq.entries.append(Completion(wr.wr_id, "SEND", "SUCCESS", wr.length))
            return True
        need = {"WRITE": REMOTE_WRITE, "READ": REMOTE_READ, "FETCH_ADD": REMOTE_ATOMIC}
        target = peer.nic.regions.get(wr.rkey)
        size = 8 if wr.opcode == "FETCH_ADD" else wr.length
        if (
            target is None
            or not target.access & need[wr.opcode]
            or wr.remote_offset + size > target.buf.numel()
        ):
            self.cq.entries.append(Completion(wr.wr_id, wr.opcode, "REM_ACCESS_ERR"))
            return True
        there = target.buf[wr.remote_offset : wr.remote_offset + size]
        if wr.opcode == "WRITE":
            there.copy_(src)
        elif wr.opcode == "READ":
            src.copy_(there)
        else:
            there.view(torch.int64).add_(wr.add)
        self.cq.entries.append(Completion(wr.wr_id, wr.opcode, "SUCCESS", size))
        return True


def run(qps: list[QueuePair], order: list[int] | None = None) -> None:
    """Drain the queue pairs: in the given order of QP indices, else round-robin."""
    if order is not None:
        for i in order:
            qps[i].step()
    while any(qp.step() for qp in qps):
        pass


def put_with_signal(
    data_qp: QueuePair,
    signal_qp: QueuePair,
    payload: MemoryRegion,
    nbytes: int,
    remote_rkey: int,
    counter_rkey: int,
    tokens: int,
) -> None:
    """DeepEP's low-latency pattern: write the tokens, then add ``-tokens - 1`` to a counter
    the receiver polls. Zero means "nothing yet", so even zero tokens are announced (as -1)."""
    data_qp.post_send(WorkRequest(1, "WRITE", payload, 0, nbytes, 0, remote_rkey))
    signal_qp.post_send(WorkRequest(2, "FETCH_ADD", rkey=counter_rkey, add=-tokens - 1))


# -- a transfer engine over several NICs ------------------------------------------------------
def slice_request(
    length: int, slice_size: int = 65536, fragment: int = 16384
) -> list[tuple[int, int]]:
    """Cut a transfer into ``(offset, length)`` slices of ``slice_size`` bytes, as Mooncake's
    transfer engine does: a remainder of at most ``slice_size + fragment`` bytes is sent as one
    last slice rather than leaving a small fragment (defaults: 64 KiB slices, 16 KiB fragment
    limit)."""
    slices, offset = [], 0
    while offset < length:
        remaining = length - offset
        n = remaining if remaining <= slice_size + fragment else slice_size
        slices.append((offset, n))
        offset += n
    return slices


def slice_count(length: int, slice_size: int = 65536, fragment: int = 16384) -> int:
    """Closed form for ``len(slice_request(...))``: one slice up to ``slice_size + fragment``
    bytes, otherwise ``ceil((length - fragment) / slice_size)``."""
    if length <= 0:
        return 0
    if length <= slice_size + fragment:
        return 1
    return math.ceil((length - fragment) / slice_size)


def spread(slices: list[tuple[int, int]], nics: int, round_robin: bool, seed: int = 0) -> list[int]:
    """Bytes each NIC carries when every slice picks a NIC, in turn or at random."""
    rng = random.Random(seed)
    load = [0] * nics
    for i, (_, n) in enumerate(slices):
        load[i % nics if round_robin else rng.randrange(nics)] += n
    return load


def transfer_time(load: list[int], bandwidth: float) -> float:
    """The transfer ends when the busiest NIC has pushed its bytes."""
    return max(load) / bandwidth


def ideal_time(length: int, nics: int, bandwidth: float) -> float:
    """Perfect balance: ``length`` spread evenly, ``length / (nics * bandwidth)``."""
    return length / (nics * bandwidth)


def round_robin_slices_on_busiest(length: int, slice_size: int, nics: int) -> int:
    """Closed form: the busiest NIC under round-robin gets ``ceil(m / k)`` of ``m`` slices."""
    return math.ceil(slice_count(length, slice_size) / nics)
