"""Checks of the labs of ``multimodal/connectors.md``.

The chapter's checks: Checks of the multimodal chapter's labs, and loaders of Megatron-LM's code
at its pin: ``get_num_image_embeddings`` (clip_vit_model.py),
``MimoModel.align_embeddings_by_token_positions`` (mimo/model/base.py, run as a plain function)
and ``greedy_knapsack`` (examples/multimodal).
"""

from __future__ import annotations

import functools
import logging

import torch

from atlas.labkit.pinned import definitions

ROLE = "check"


@functools.cache
def megatron_align_embeddings():
    """The method ``MimoModel.align_embeddings_by_token_positions`` at the pin, compiled on its
    own (its body uses only torch and a logger); call it with ``self=None``."""
    scope = definitions(
        "megatron",
        "megatron/core/models/mimo/model/base.py",
        ("MimoModel.align_embeddings_by_token_positions",),
        {"torch": torch, "Dict": dict, "logger": logging.getLogger("mimo")},
    )
    return functools.partial(scope["align_embeddings_by_token_positions"], None)
