"""Occupancy from ptxas's resource report, two ways: the book's model and NVIDIA's calculator.

The book's model is :func:`atlas.labkit.kernels.gpu_model.occupancy` (taught on the kernels
chapter's index), fed with the per-SM limits of the hardware registry. The independent reference
is NVIDIA's own occupancy calculator, ``cuda_occupancy.h``: a header-only C++ implementation of
``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` that ships in the ``nvidia-cuda-runtime`` wheel
and needs no GPU. It is compiled once with the host compiler into a small program that takes the
device's and the kernel's figures on its command line.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from atlas.labkit.cuda.ptxas import Resources
from atlas.labkit.cuda.store import cached, digest
from atlas.labkit.cuda.toolchain import toolchain
from atlas.labkit.kernels.gpu_model import Occupancy, occupancy
from atlas.labkit.registry.sm import SMLimits, sm_limits

ROLE = "support"

# The GPU of the hardware registry that each architecture the pages compile for stands for.
GPU_OF_ARCH = {"sm_80": "A100-80GB-SXM", "sm_90": "H100-SXM"}

_PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#include "cuda_occupancy.h"
int main(int argc, char** argv) {
  if (argc != 13) return 2;
  long v[12];
  for (int i = 1; i < 13; ++i) v[i - 1] = std::atol(argv[i]);
  cudaOccDeviceProp p;
  p.computeMajor = v[0]; p.computeMinor = v[1]; p.maxThreadsPerBlock = v[2];
  p.maxThreadsPerMultiprocessor = v[3]; p.regsPerBlock = v[4]; p.regsPerMultiprocessor = v[4];
  p.warpSize = v[5]; p.sharedMemPerBlock = 48 * 1024; p.sharedMemPerMultiprocessor = v[6];
  p.numSms = 1; p.sharedMemPerBlockOptin = v[7]; p.reservedSharedMemPerBlock = v[8];
  cudaOccFuncAttributes f;
  f.maxThreadsPerBlock = v[2]; f.numRegs = v[9]; f.sharedSizeBytes = v[10];
  cudaOccDeviceState s;
  cudaOccResult r;
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &f, &s, (int)v[11], 0) != CUDA_OCC_SUCCESS)
    return 3;
  std::printf("%d\n", r.activeBlocksPerMultiprocessor);
  return 0;
}
"""


def limits_of(arch: str) -> SMLimits:
    """The registry's per-SM limits for ``sm_80`` or ``sm_90``."""
    try:
        return sm_limits(GPU_OF_ARCH[arch])
    except KeyError:
        raise KeyError(f"no registry GPU for {arch}; known: {', '.join(GPU_OF_ARCH)}") from None


def model_occupancy(resources: Resources, threads_per_block: int) -> Occupancy:
    """The book's occupancy model, fed with ptxas's registers and shared memory."""
    return occupancy(
        threads_per_block, resources.registers, resources.shared, limits_of(resources.arch)
    )


def _runtime_include() -> Path:
    tools = toolchain()
    include = tools.nvcc.parent.parent / "include"
    if not (include / "cuda_occupancy.h").exists():
        raise FileNotFoundError(f"cuda_occupancy.h is not in {include} (nvidia-cuda-runtime)")
    return include


def _calculator() -> Path:
    tools = toolchain()
    include = _runtime_include()
    header = (include / "cuda_occupancy.h").read_bytes()
    key = digest(["occupancy", _PROGRAM, header, tools.cxx_version])

    def produce(folder: Path) -> None:
        (folder / "occupancy.cpp").write_text(_PROGRAM, encoding="utf-8")
        subprocess.run(
            [str(tools.cxx), "-O1", "-w", f"-I{include}", str(folder / "occupancy.cpp"), "-o",
             str(folder / "occupancy")],
            check=True, capture_output=True,
        )  # fmt: skip

    folder, _ = cached(key, produce)
    return folder / "occupancy"


def nvidia_blocks(resources: Resources, threads_per_block: int) -> int:
    """Resident blocks per SM by NVIDIA's ``cuda_occupancy.h``, from the same figures."""
    sm = limits_of(resources.arch)
    major, minor = sm.compute_capability.split(".")
    figures = [
        major, minor, sm.max_threads_per_block, sm.max_warps_per_sm * sm.warp_size,
        sm.registers_per_sm, sm.warp_size, sm.smem_per_sm, sm.max_smem_per_block,
        sm.smem_reserved_per_block, resources.registers, resources.shared, threads_per_block,
    ]  # fmt: skip
    run = subprocess.run(
        [str(_calculator()), *map(str, figures)], capture_output=True, text=True, check=True
    )
    return int(run.stdout)
