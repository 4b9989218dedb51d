"""CUDA C in a build without a GPU: compile the book's ``.cu`` kernels with nvcc from the pinned
wheels, read ptxas's resource report and the SASS, and run the same source on the CPU.

One module per job: :mod:`.toolchain` finds the binaries in this environment, :mod:`.store` is
the compile cache, :mod:`.nvcc` compiles to cubin, :mod:`.ptxas` parses the resource report,
:mod:`.sass` disassembles and counts instructions, :mod:`.occupancy` turns a resource report into
resident blocks, :mod:`.cpu` builds and runs a kernel file over the CPU thread model
(``include/atlas_cuda_cpu.h``). The kernels the pages teach are in ``kernels/``.
"""

ROLE = "support"
