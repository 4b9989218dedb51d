"""Taught code of the serving chapter (source/serving/), each module shown on its pages.

Small modules written for reading next to the chapter: a paged KV cache and attention through
a block table (``paged_attention``), a block allocator with reference counts and copy-on-write
(``block_allocator``), prefix caching over chains of full blocks (``prefix_cache``), a
request-trace scheduler simulator (``simulator``), the KV-cache ledger of a model
configuration (``models``) and roofline arithmetic (``roofline``). The labs' checks, traces
and demos, and the loader that runs nano-vllm's own code at its pin, are in
``atlas.labkit.checks.serving``.
"""

ROLE = "taught"
