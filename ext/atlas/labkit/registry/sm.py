"""What one streaming multiprocessor holds and how fast it computes exponentials, each with its
source: the per-SM limits that decide occupancy, the granules of the memory system that decide
coalescing and bank conflicts, and the exp throughput that bounds a softmax."""

from __future__ import annotations

from dataclasses import dataclass, field

from atlas.labkit.registry.hardware import KIB, TERA

ROLE = "support"


# --- added for kernels ---
# What one streaming multiprocessor (SM) can hold at once, which decides occupancy, and the
# granules of the memory system, which decide coalescing and bank conflicts. The per-SM limits
# are the CUDA C++ Programming Guide's table of technical specifications per compute
# capability; the allocation granularities are those of NVIDIA's CUDA Occupancy Calculator; the
# 32-byte sector is the unit in which the Best Practices Guide counts a warp's global accesses.


@dataclass(frozen=True)
class SMLimits:
    """Per-SM resources of one compute capability, as the CUDA documentation states them."""

    compute_capability: str
    warp_size: int
    max_threads_per_block: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int  # 32-bit registers
    max_registers_per_thread: int
    register_alloc_unit: int  # registers are handed out per warp, in units of this many
    smem_per_sm: int  # bytes: the largest shared-memory carve-out of one SM
    max_smem_per_block: int  # bytes one block may use (opt-in above 48 KB)
    smem_reserved_per_block: int  # bytes the system reserves for each resident block
    smem_alloc_unit: int  # bytes: shared memory is allocated per block in these units
    smem_banks: int
    smem_bank_bytes: int
    sector_bytes: int  # global-memory transaction granule (L1/L2 sector)
    cache_line_bytes: int
    sources: dict[str, str] = field(default_factory=dict, repr=False)


_SM_SOURCES = {
    "limits": "cite:nvidia2025cudaguide (Technical Specifications per Compute Capability: 32 "
    "threads per warp, 1,024 threads per block, 64 resident warps and 32 resident blocks per "
    "SM, 64K 32-bit registers per SM, 255 registers per thread, 32 shared-memory banks of 4 "
    "bytes; shared memory per SM 164 KB (8.0) / 228 KB (9.0), per block 163 KB / 227 KB, 1 KB "
    "reserved per block)",
    "granularity": "cite:nvidia2023occupancy (register allocation unit 256, per warp; shared "
    "memory allocation unit 128 bytes)",
    "sector": "cite:nvidia2025bestpractices (a warp's accesses coalesce into as many 32-byte "
    "transactions as needed; 128-byte cache lines)",
}

SM_LIMITS: dict[str, SMLimits] = {
    "A100-80GB-SXM": SMLimits(
        "8.0",
        32,
        1024,
        64,
        32,
        65536,
        255,
        256,
        164 * KIB,
        163 * KIB,
        1 * KIB,
        128,
        32,
        4,
        32,
        128,
        _SM_SOURCES,
    ),
    "H100-SXM": SMLimits(
        "9.0",
        32,
        1024,
        64,
        32,
        65536,
        255,
        256,
        228 * KIB,
        227 * KIB,
        1 * KIB,
        128,
        32,
        4,
        32,
        128,
        _SM_SOURCES,
    ),
    "H200-SXM": SMLimits(
        "9.0",
        32,
        1024,
        64,
        32,
        65536,
        255,
        256,
        228 * KIB,
        227 * KIB,
        1 * KIB,
        128,
        32,
        4,
        32,
        128,
        _SM_SOURCES,
    ),
}


def sm_limits(name: str) -> SMLimits:
    """The per-SM limits of the registered GPU ``name`` (see ``SM_LIMITS``)."""
    try:
        return SM_LIMITS[name]
    except KeyError:
        raise KeyError(f"no SM limits for {name!r}; known: {', '.join(SM_LIMITS)}") from None


# --- added for attention ---
# Throughput of the special-function units that evaluate exponentials (MUFU.EX2), the
# bottleneck of the softmax once the matrix products run on tensor cores.
EXP_THROUGHPUT: dict[str, float] = {
    "H100-SXM": 3.9 * TERA,
}
EXP_THROUGHPUT_SOURCES: dict[str, str] = {
    "H100-SXM": "cite:shah2024flashattention3 (section 3: the H100 SXM5 has 989 TFLOPS of "
    "FP16 matmul but only 3.9 TFLOPS of special functions such as exponential)",
}


# --- added for kernels (SGEMM) ---
# The fp32 rate of the CUDA cores (no tensor cores): what an SGEMM kernel without tensor cores
# can reach, and the cores per SM, which with the peak give the clock at which shared memory
# serves its banks (``smem_banks * smem_bank_bytes`` bytes per clock per SM).


@dataclass(frozen=True)
class Fp32Cores:
    """fp32 CUDA cores per SM (one multiply-add per clock each) and the part's fp32 peak."""

    cores_per_sm: int
    peak_flops: float  # FLOP/s, a multiply-add counted as two
    source: str


FP32_CORES: dict[str, Fp32Cores] = {
    "A100-80GB-SXM": Fp32Cores(
        64,
        19.5 * TERA,
        "cite:nvidia2020ampere (64 FP32 cores per SM); cite:nvidia2020a100 (FP32 19.5 TFLOPS)",
    ),
    "H100-SXM": Fp32Cores(
        128,
        67 * TERA,
        "cite:nvidia2022hopper (128 FP32 cores per SM); cite:nvidia2022h100 (H100 SXM: FP32 67 "
        "teraFLOPS)",
    ),
    "H200-SXM": Fp32Cores(
        128,
        67 * TERA,
        "cite:nvidia2022hopper (the GH100 SM); cite:nvidia2024h200 (H200 SXM: FP32 67 teraFLOPS)",
    ),
}
