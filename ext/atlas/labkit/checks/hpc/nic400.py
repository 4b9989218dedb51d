"""Published measurements of 400 Gb/s cards, read from the upstreams' own files at the pins.

``hpc/rdma.md`` sets a table of what was measured on 400 Gb/s cards beside the 100 Gb/s
latency table of a thesis. The figures come from two upstreams the book pins: DeepEP's V1
documentation (H800 GPUs, one ConnectX-7 InfiniBand card per GPU) and Mooncake's README and
EFA transport guide. This module parses them out of those files at the pins, so that a lab
redoes the page's arithmetic (bits to bytes, an aggregate over several cards to one card's
share of its line) on the published numbers themselves, not on numbers typed into the book.
"""

from __future__ import annotations

import re

from atlas.labkit.pinned import pinned

ROLE = "check"

_DEEPEP_DOC = "docs/legacy.md"
_MOONCAKE_README = "README.md"
_MOONCAKE_EFA = "docs/source/design/transfer-engine/efa_transport.md"


def line_rate_gbs(gbps: float) -> float:
    """A link's rate in GB/s (10^9 bytes) from its rate in Gb/s: eight bits to a byte."""
    return gbps / 8


def per_card(aggregate_gbs: float, cards: int, gbps: float) -> tuple[float, float]:
    """One card's share of an aggregate bandwidth spread evenly over ``cards`` cards of
    ``gbps`` Gb/s each, and that share as a fraction of the card's line rate."""
    share = aggregate_gbs / cards
    return share, share / line_rate_gbs(gbps)


def deepep_normal_internode() -> dict:
    """DeepEP V1's normal-kernel internode rows: ``{"rows": {EP: (dispatch, combine)}}`` in
    GB/s as the documentation prints them, the card it names (``gbps``) with the maximum it
    states for it (``stated_gbs``), and the label ``deepep@<sha> docs/legacy.md``."""
    files = pinned("deepep")
    text = files.read_text(_DEEPEP_DOC)
    card = re.search(r"CX7 InfiniBand (\d+) Gb/s RDMA network card \(~(\d+) GB/s maximum", text)
    if card is None:
        raise LookupError(f"deepep {_DEEPEP_DOC}: no CX7 card named at the pin")
    row = r"\|\s*Internode\s*\|\s*(\d+)\s*\|\s*(\d+) GB/s \(RDMA\)\s*\|\s*\d+\s*\|\s*(\d+) GB/s"
    rows = {int(ep): (float(d), float(c)) for ep, d, c in re.findall(row, text)}
    if not rows:
        raise LookupError(f"deepep {_DEEPEP_DOC}: no internode rows at the pin")
    return {
        "rows": rows,
        "gbps": float(card.group(1)),
        "stated_gbs": float(card.group(2)),
        "label": f"{files.label(7)} {_DEEPEP_DOC}",
    }


def mooncake_roce() -> dict:
    """Mooncake's README figure for 400 Gb/s RoCE: the aggregate GB/s of one transfer over
    ``cards`` cards of ``gbps`` Gb/s, and the label ``mooncake@<sha> README.md``."""
    files = pinned("mooncake")
    text = files.read_text(_MOONCAKE_README)
    found = re.search(
        r"\*\*([\d.]+) GB/s\*\* and \*\*([\d.]+) GB/s\*\* of bandwidth in "
        r"(\d+)×(\d+) Gbps and (\d+)×(\d+) Gbps RoCE",
        text,
    )
    if found is None:
        raise LookupError(f"mooncake {_MOONCAKE_README}: no RoCE bandwidth sentence at the pin")
    _, second, _, _, cards, gbps = found.groups()
    return {
        "aggregate_gbs": float(second),
        "cards": int(cards),
        "gbps": float(gbps),
        "label": f"{files.label(7)} {_MOONCAKE_README}",
    }


def mooncake_efa() -> dict:
    """The GPU-to-GPU write peak of Mooncake's EFA guide on its 16-device 400 Gb/s instance:
    the best write of that table (GB/s), the device count and rate, the share of line rate
    the guide states for it (``stated_fraction``), and the label."""
    files = pinned("mooncake")
    text = files.read_text(_MOONCAKE_EFA)
    head = re.search(r"#### 1\. [^\n]*\((\w+), (\d+) EFA × (\d+) Gbps\)", text)
    if head is None:
        raise LookupError(f"mooncake {_MOONCAKE_EFA}: no 400 Gbps instance at the pin")
    section = text[head.end() : text.find("#### 2.", head.end())]
    table = section[: section.find("**CPU-to-CPU**")]
    writes = [float(w) for w in re.findall(r"\|\s*\**block=[^|]*\|\s*\**([\d.]+) GB/s", table)]
    stated = re.search(r"~([\d.]+)% of the (\d+) GB/s theoretical line rate", section)
    if not writes or stated is None:
        raise LookupError(f"mooncake {_MOONCAKE_EFA}: the write table changed at the pin")
    return {
        "gpu": head.group(1),
        "write_gbs": max(writes),
        "cards": int(head.group(2)),
        "gbps": float(head.group(3)),
        "stated_fraction": float(stated.group(1)) / 100,
        "stated_line_gbs": float(stated.group(2)),
        "label": f"{files.label(7)} {_MOONCAKE_EFA}",
    }
