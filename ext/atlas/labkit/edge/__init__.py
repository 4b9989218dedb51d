"""The edge chapter's lab code: the bounds of a small device and llama.cpp's weight formats.

Taught modules (each shown on its page with ``labcode``):

- :mod:`.bounds`: bytes of a model's weights and cache, and the batch-1 decode bound
  (tokens per second at most bandwidth over bytes read per token);
- :mod:`.blocks`: ggml's block formats as element and byte counts (bytes per weight);
- :mod:`.quants`: Q4_0, Q8_0 and Q4_K blocks quantised and dequantised in NumPy;
- :mod:`.gguf`: a reader of a GGUF file's header, metadata and tensor table.
"""

ROLE = "taught"
