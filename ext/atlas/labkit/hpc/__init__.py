"""atlas.labkit.hpc: the code the HPC foundations chapter teaches; its checks are in
``atlas.labkit.checks.hpc``.

Taught modules (each quoted on its page with the ``labcode`` directive):

- :mod:`.roofline`: FLOPs, bytes and arithmetic intensity of GEMMs, attention, elementwise ops
  and collectives; the ridge point; the batch at which decode turns compute-bound; MFU.
- :mod:`.collectives`: ring reduce-scatter, all-gather and all-reduce, recursive
  halving/doubling, a two-level (hierarchical) all-reduce and all-to-all, all built from
  point-to-point ``send``/``recv`` with every byte counted.
- :mod:`.trees`: the binary and double binary trees NCCL builds over ranks.
- :mod:`.alphabeta`: the alpha-beta cost of each all-reduce algorithm, and an event simulator
  that runs their message schedules over ports with latency and bandwidth.
- :mod:`.verbs`: a toy model of RDMA verbs (memory regions, queue pairs, completion queues)
  and of a transfer engine that slices a request over several NICs.
- :mod:`.failures`: the Young/Daly checkpoint interval and a simulated run with failures;
  stragglers.

:mod:`atlas.labkit.checks.hpc` holds what the labs need but the pages do not teach: FLOP and byte
counters, the NCCL tree builder compiled from its source at the pin, the registry table.
"""

ROLE = "taught"
