"""Lab code of the Attention chapter.

Taught modules (each shown on its page with the ``labcode`` directive):

- :mod:`~atlas.labkit.attention.cost`: FLOPs, bytes and KV-cache bytes of attention.
- :mod:`~atlas.labkit.attention.flash`: naive attention, tiled attention with the online
  softmax, the backward pass recomputed from the log-sum-exp, counted HBM traffic.
- :mod:`~atlas.labkit.attention.partition`: the work split of FlashAttention-2 and -3 (grids,
  waves, schedules, shared-memory budgets, FP8 scaling).
- :mod:`~atlas.labkit.attention.decode`: variable-length batches, split-KV and its merge.
- :mod:`~atlas.labkit.attention.mla`: multi-head latent attention, naive and absorbed.
- :mod:`~atlas.labkit.attention.sparse`: sliding windows, sinks, block-sparse and top-k.
- :mod:`~atlas.labkit.attention.linear`: linear attention, gating and the delta rule in
  recurrent, parallel and chunkwise forms.

:mod:`atlas.labkit.checks.attention` holds what the labs need but the pages do not teach:
seeding, random inputs, and loaders that run upstream reference code at its pin.
"""

ROLE = "taught"
