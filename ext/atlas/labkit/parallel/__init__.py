"""Reference implementations of the five parallelism dimensions, small enough to read.

Each module pairs a parallel implementation built on real ``torch.distributed`` collectives with
a rank function that checks it against a single-process reference, for use through
:func:`atlas.labkit.run_ranks`:

- :mod:`.memory`: the bytes of a training step (weights, gradients, optimizer states) and the
  rank groups of a device mesh.
- :mod:`.data`: DDP with bucketed all-reduce, ZeRO-1/2 sharded optimizer, ZeRO-3 sharded params.
- :mod:`.fsdp`: FSDP1's flat shards and FSDP2's per-parameter dim-0 shards, with the elements
  and bytes a step moves (checked against torch's own ``fully_shard``).
- :mod:`.tensor`: column- and row-parallel linear layers, the conjugate f/g operators, sequence
  parallelism.
- :mod:`.pipeline`: a send/recv pipeline and a schedule simulator (GPipe, 1F1B, interleaved).
- :mod:`.context`: ring attention with online-softmax merging and causal load balancing;
  all-to-all (Ulysses) attention.
- :mod:`.expert`: an expert-parallel mixture-of-experts layer with all-to-all dispatch/combine.

:func:`in_sequence` (from :mod:`atlas.labkit.ranks`) runs several rank functions in one
process group.

Everything runs on CPU in float64 so that parallel and reference results agree to rounding.
"""

from __future__ import annotations

from atlas.labkit.ranks import in_sequence  # re-exported: the pages import it from here

ROLE = "support"

__all__ = ["in_sequence"]
