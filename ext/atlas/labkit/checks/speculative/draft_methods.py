"""Checks of the labs of ``speculative/draft-methods.md``.

The chapter's checks: seeded distributions, Monte Carlo estimates and their bounds, the plain
decoding reference, and upstream functions run from their source at the pins (EAGLE's
verification and tree buffers, Megatron-LM's verification and KV rewind).
"""

from __future__ import annotations

import copy

from atlas.labkit.speculative.model import TinyLM

ROLE = "check"


def early_exit(model: TinyLM, layers: int) -> TinyLM:
    """A self-speculative draft: the target's own first ``layers`` blocks, then its head."""
    d = copy.copy(model)
    d.blocks = model.blocks[:layers]
    return d
