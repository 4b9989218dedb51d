"""Labkit of the CUDA and kernel-DSLs chapter: Triton kernels run by Triton's interpreter.

Every ``@triton.jit`` kernel of this package runs on the CPU, through Triton's interpreter: it
executes each program of the launch grid one after another with NumPy arrays for blocks. The
interpreter is chosen when a kernel is *decorated*, from ``TRITON_INTERPRET``, so this package
sets the variable before any of its modules imports ``triton``. Labs run in workers forked from
a zygote that imports torch but not triton, so the setting reaches every kernel a lab builds.

Taught modules (shown on the pages with ``labcode``): ``gpu_model`` (coalescing, banks, occupancy),
``triton_basics`` (vector add, softmax, layer norm), ``matmul`` (tiled GEMM, grouped ordering),
``flash`` (a FlashAttention forward), ``cute`` (CuTe's layout algebra) and ``overlap`` (chunked
communication pipelines, persistent schedules). ``atlas.labkit.checks.kernels`` holds the memory
tracer, the loaders of upstream kernels and the references the labs compare with.
"""

import os

ROLE = "taught"

os.environ["TRITON_INTERPRET"] = "1"
