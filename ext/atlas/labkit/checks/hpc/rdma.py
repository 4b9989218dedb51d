"""Checks of the labs of ``hpc/rdma.md``: the QP state machine against NCCL's own transitions.

The taught model (:mod:`atlas.labkit.hpc.verbs`) requires, for each transition of a
reliable-connected queue pair, a set of attributes. NCCL's InfiniBand plugin drives real cards
through the same transitions; whatever it sets is accepted by every card NCCL runs on. This
module reads the masks it passes to ``ibv_modify_qp`` from ``src/transport/net_ib/connect.cc``
at the pin, so that a lab can compare the two without typing NCCL's masks into the book.
"""

from __future__ import annotations

import re

from atlas.labkit.pinned import pinned

ROLE = "check"

_FILE = "src/transport/net_ib/connect.cc"

#: The functions of connect.cc that move a QP to each state, by the state they reach.
_FUNCTIONS = {"INIT": "ncclIbQpInit", "RTR": "ncclIbQpRtr", "RTS": "ncclIbQpRts"}


def _body(text: str, name: str) -> str:
    """The body of ``ncclResult_t name(...)``: from its signature to the first closing brace
    at the start of a line."""
    start = text.find(f"ncclResult_t {name}(")
    if start < 0:
        raise LookupError(f"nccl {_FILE}: no function {name} at the pin")
    end = text.find("\n}\n", start)
    return text[start:end]


def _mask(body: str) -> frozenset[str]:
    """The ``IBV_QP_*`` bits this function passes to ``ibv_modify_qp`` for a reliable-connected
    QP: every bit on a line that builds ``attrMask`` (including the bits NCCL adds only when the
    QP is not unreliable-connected, which an RC QP always takes), or on the
    ``wrap_ibv_modify_qp`` call itself when the mask is written inline."""
    lines = [ln for ln in body.splitlines() if "attrMask" in ln or "wrap_ibv_modify_qp" in ln]
    bits = re.findall(r"IBV_QP_([A-Z_]+)\b", "\n".join(lines))
    return frozenset(bits)


def nccl_qp_masks() -> tuple[dict[str, frozenset[str]], str]:
    """``{"INIT": {...}, "RTR": {...}, "RTS": {...}}`` as NCCL sets them at the pin, and the
    label ``nccl@<sha> <file>``."""
    files = pinned("nccl")
    text = files.read_text(_FILE)
    masks = {state: _mask(_body(text, fn)) for state, fn in _FUNCTIONS.items()}
    return masks, f"nccl@{files.pin[:7]} {_FILE}"


#: Median one-way latencies (microseconds) by message size (bytes) that perftest's
#: ``ib_send_lat`` measured over reliable-connected QPs (set up through RDMA CM) with a
#: 4,096-byte MTU, as printed in the table file of ``cite:potter2018infiniband`` (the LaTeX
#: sources of a 2018 master's thesis; ConnectX-4 MT27700, 100 Gb/s EDR, 0.5 m passive copper
#: cable, MLNX OFED 4.4, 1,000 iterations, messages under 188 bytes sent inline). The table
#: prints the sizes as 32 B, 1 kB, 4 kB and 32 kB; they are taken as perftest's powers of two.
POTTER_IB_SEND_LAT_US: dict[int, float] = {32: 0.83, 1024: 1.61, 4096: 2.28, 32768: 4.57}
