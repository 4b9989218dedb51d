"""Reference implementations for the serving chapter (source/serving/).

Each module is small and written for reading next to the chapter's pages: a paged KV cache
and attention through a block table, a block allocator with reference counts and
copy-on-write, prefix caching over chains of full blocks, a request-trace scheduler simulator,
the KV-cache ledger of a model configuration, and roofline arithmetic. ``nanovllm`` loads
nano-vllm's own pure-Python block manager from the upstream git objects at the pin.
"""
