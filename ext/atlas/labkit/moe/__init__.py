"""Mixture of experts, taught in plain torch: what the Mixture-of-experts chapter explains.

- :mod:`.layer`: the MoE layer (routed and shared SwiGLU experts) and its parameter and FLOP
  counts.
- :mod:`.router`: score functions, top-k (plain, biased and group-limited), the auxiliary,
  sequence-wise and z losses, the auxiliary-loss-free bias update, capacity and dropping, and a
  small training run that compares the routes to balance.
- :mod:`.capacity`: the expected fraction of dropped assignments in closed form.
- :mod:`.granularity`: fine-grained experts as slices of coarse ones; expert combinations and
  the distinct ranks a token reaches.
- :mod:`.grouped_gemm`: the ragged batch through a per-expert loop, padded ``bmm``, a contiguous
  layout tile by tile and a masked layout; the tiles each layout computes.
- :mod:`.dispatch`: node-limited routing, the dispatch layout, and dispatch and combine on gloo
  ranks, flat or through one inter-node hop and intra-node forwarding, with every row counted.
- :mod:`.eplb`: redundant experts and their placement on GPUs.

:mod:`atlas.labkit.checks.moe` (not taught) loads the upstreams' own code at the pin for comparison,
and holds the data generators of the labs.
"""

ROLE = "taught"
