"""Checks of the labs of ``multimodal/index.md``.

The chapter's checks: Checks of the multimodal chapter's labs, and loaders of Megatron-LM's code
at its pin: ``get_num_image_embeddings`` (clip_vit_model.py),
``MimoModel.align_embeddings_by_token_positions`` (mimo/model/base.py, run as a plain function)
and ``greedy_knapsack`` (examples/multimodal).
"""

from __future__ import annotations

import functools

from atlas.labkit.pinned import definitions

ROLE = "check"


@functools.cache
def megatron_num_image_embeddings():
    scope = definitions(
        "megatron", "megatron/core/models/vision/clip_vit_model.py", ("get_num_image_embeddings",)
    )
    return scope["get_num_image_embeddings"]
