"""Accelerator figures: compute per dtype, memory, caches and links, each with its source.

One :class:`GPU` per part. Tensor-core throughput is **dense** (vendors print the 2:4-sparse
figure, twice as large, first; we halve it and say so in the source note). Units are SI:
FLOP/s, bytes, bytes/s (``1 TB/s = 1e12 B/s``; memory capacities are the vendor's decimal GB,
``80 GB = 80e9 B``). A figure the cited documents do not give is ``None``, never a guess.

Sources are bibliography keys (``cite:KEY``, see ``source/references.bib``) with the table or
section they come from. Accessors stay simple: the roofline arithmetic that uses these figures
is taught in the HPC chapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROLE = "support"

TERA = 1e12
PETA = 1e15
GB = 1e9

KIB = 1024
MIB = 1024**2


@dataclass(frozen=True)
class GPU:
    """One accelerator as its datasheet and architecture whitepaper describe it."""

    name: str
    architecture: str
    sms: int | None
    flops: dict[str, float]  # dense tensor-core FLOP/s by dtype ("fp64" is the FP64 tensor core)
    hbm_bytes: float
    hbm_bandwidth: float  # bytes/s
    l2_bytes: int | None
    smem_per_sm: int | None  # bytes of shared memory one SM can give a block set (max carve-out)
    nvlink_bandwidth: float  # bytes/s per GPU, both directions together, as NVIDIA states it
    nic_bandwidth: float | None  # bytes/s per GPU of scale-out network in the vendor's system
    tdp_watts: float | None
    sources: dict[str, str] = field(default_factory=dict, repr=False)

    def peak(self, dtype: str) -> float:
        """Dense tensor-core FLOP/s for ``dtype``; KeyError when the part has none."""
        try:
            return self.flops[dtype]
        except KeyError:
            raise KeyError(
                f"{self.name} has no {dtype} tensor-core figure; it has {', '.join(self.flops)}"
            ) from None


_GPUS: list[GPU] = []


def _add(g: GPU) -> GPU:
    _GPUS.append(g)
    return g


_add(
    GPU(
        name="A100-80GB-SXM",
        architecture="Ampere",
        sms=108,
        flops={
            "fp64": 19.5 * TERA,
            "tf32": 156 * TERA,
            "bf16": 312 * TERA,
            "fp16": 312 * TERA,
        },
        hbm_bytes=80 * GB,
        hbm_bandwidth=2039 * GB,
        l2_bytes=40 * MIB,
        smem_per_sm=164 * KIB,
        nvlink_bandwidth=600 * GB,
        nic_bandwidth=None,
        tdp_watts=400,
        sources={
            "flops": "cite:nvidia2020a100 (A100 80GB SXM column; TF32/BF16/FP16 dense, the "
            "datasheet's starred figures are sparse)",
            "hbm": "cite:nvidia2020a100 (80GB HBM2e, 2,039 GB/s)",
            "nvlink": "cite:nvidia2020a100 (NVLink 600 GB/s)",
            "tdp": "cite:nvidia2020a100 (400 W)",
            "sms": "cite:nvidia2020ampere (Table 'A100 SXM4': 108 SMs, 40 MB L2, up to 164 KB "
            "shared memory per SM)",
            "nic": "not in the cited documents (None)",
        },
    )
)

_add(
    GPU(
        name="H100-SXM",
        architecture="Hopper",
        sms=132,
        flops={
            "fp64": 67 * TERA,
            "tf32": 494.5 * TERA,
            "bf16": 989.5 * TERA,
            "fp16": 989.5 * TERA,
            "fp8": 1979 * TERA,
        },
        hbm_bytes=80 * GB,
        hbm_bandwidth=3.35e12,
        l2_bytes=50 * MIB,
        smem_per_sm=228 * KIB,
        nvlink_bandwidth=900 * GB,
        nic_bandwidth=400e9 / 8,
        tdp_watts=700,
        sources={
            "flops": "cite:nvidia2022h100 (H100 SXM: FP64 Tensor Core 67 TF; TF32 989, "
            "BF16/FP16 1,979, FP8 3,958 TF with sparsity, halved here)",
            "hbm": "cite:nvidia2022h100 (80 GB, 3.35 TB/s)",
            "nvlink": "cite:nvidia2022h100 (NVLink 900 GB/s)",
            "tdp": "cite:nvidia2022h100 (up to 700 W)",
            "sms": "cite:nvidia2022hopper (H100 SXM5: 132 SMs, 50 MB L2, shared memory up to "
            "228 KB per SM)",
            "nic": "cite:nvidia2024basepod (DGX H100/H200: eight single-port ConnectX-7, up to "
            "400 Gb/s each, for the compute fabric: one per GPU)",
        },
    )
)

_add(
    GPU(
        name="H200-SXM",
        architecture="Hopper",
        sms=132,
        flops={
            "fp64": 67 * TERA,
            "tf32": 494.5 * TERA,
            "bf16": 989.5 * TERA,
            "fp16": 989.5 * TERA,
            "fp8": 1979 * TERA,
        },
        hbm_bytes=141 * GB,
        hbm_bandwidth=4.8e12,
        l2_bytes=50 * MIB,
        smem_per_sm=228 * KIB,
        nvlink_bandwidth=900 * GB,
        nic_bandwidth=400e9 / 8,
        tdp_watts=700,
        sources={
            "flops": "cite:nvidia2024h200 (H200 SXM: FP64 Tensor Core 67 TF; TF32 989, "
            "BF16/FP16 1,979, FP8 3,958 TF with sparsity, halved here)",
            "hbm": "cite:nvidia2024h200 (141 GB HBM3e, 4.8 TB/s)",
            "nvlink": "cite:nvidia2024h200 (NVLink 900 GB/s)",
            "tdp": "cite:nvidia2024h200 (up to 700 W)",
            "sms": "cite:nvidia2022hopper (the same GH100 SXM5 configuration as H100)",
            "nic": "cite:nvidia2024basepod (DGX H100/H200: eight single-port ConnectX-7, up to "
            "400 Gb/s each, for the compute fabric: one per GPU)",
        },
    )
)

_add(
    GPU(
        name="B200",
        architecture="Blackwell",
        sms=None,
        flops={
            "fp64": 37 * TERA,
            "tf32": 1.1 * PETA,
            "bf16": 2.25 * PETA,
            "fp16": 2.25 * PETA,
            "fp8": 4.5 * PETA,
            "fp4": 9 * PETA,
        },
        hbm_bytes=180 * GB,
        hbm_bandwidth=7.7e12,
        l2_bytes=None,
        smem_per_sm=228 * KIB,
        nvlink_bandwidth=1.8e12,
        nic_bandwidth=400e9 / 8,
        tdp_watts=1000,
        sources={
            "flops": "cite:nvidia2024gb200 (specifications table, HGX B200 column, per GPU: "
            "FP4 18, FP8 9, FP16/BF16 4.5, TF32 2.2 PFLOPS with sparsity, halved here; FP64 "
            "37 TFLOPS)",
            "hbm": "cite:nvidia2024gb200 (HGX B200: 180 GB HBM3E, 7.7 TB/s per GPU)",
            "nvlink": "cite:nvidia2024gb200 (fifth-generation NVLink, 1.8 TB/s)",
            "tdp": "cite:nvidia2024gb200 (HGX B200: configurable up to 1,000 W)",
            "smem": "cite:nvidia2025blackwelltuning (compute capability 10.0: up to 228 KB "
            "shared memory per SM)",
            "nic": "cite:nvidia2024basepod (DGX B200: eight single-port ConnectX-7, up to "
            "400 Gb/s each: one per GPU)",
            "sms": "not in the cited documents (None)",
            "l2": "not in the cited documents (None)",
        },
    )
)

_add(
    GPU(
        name="GB200",
        architecture="Blackwell",
        sms=None,
        flops={
            "fp64": 40 * TERA,
            "tf32": 1.25 * PETA,
            "bf16": 2.5 * PETA,
            "fp16": 2.5 * PETA,
            "fp8": 5 * PETA,
            "fp4": 10 * PETA,
        },
        hbm_bytes=186 * GB,
        hbm_bandwidth=8e12,
        l2_bytes=None,
        smem_per_sm=228 * KIB,
        nvlink_bandwidth=1.8e12,
        nic_bandwidth=None,
        tdp_watts=1200,
        sources={
            "flops": "cite:nvidia2024gb200 (specifications table, GB200 NVL72 column, per GPU: "
            "FP4 20, FP8 10, FP16/BF16 5, TF32 2.5 PFLOPS with sparsity, halved here; FP64 40 "
            "TFLOPS)",
            "hbm": "cite:nvidia2024gb200 (186 GB HBM3E, 8 TB/s per GPU)",
            "nvlink": "cite:nvidia2024gb200 (fifth-generation NVLink, 1.8 TB/s; 130 TB/s over "
            "72 GPUs)",
            "tdp": "cite:nvidia2024gb200 (configurable up to 1,200 W)",
            "smem": "cite:nvidia2025blackwelltuning (compute capability 10.0: up to 228 KB "
            "shared memory per SM)",
            "sms": "not in the cited documents (None)",
            "l2": "not in the cited documents (None)",
            "nic": "not in the cited documents (None)",
        },
    )
)

GPUS: dict[str, GPU] = {g.name: g for g in _GPUS}


def gpu(name: str) -> GPU:
    """The registered accelerator called ``name`` (see ``GPUS`` for the names)."""
    try:
        return GPUS[name]
    except KeyError:
        raise KeyError(f"unknown GPU {name!r}; known: {', '.join(GPUS)}") from None


# --- added for hpc ---
# Where the tensor-core peak comes from, and the links between GPUs. The HPC chapter checks
# the datasheet peaks against SMs x multiply-adds per clock x clock, and reasons about NVLink,
# PCIe and InfiniBand with the per-link figures below.


@dataclass(frozen=True)
class TensorCoreClock:
    """The arithmetic behind a tensor-core peak: ``sms * 2 * fma_per_clock_per_sm * clock``."""

    tensor_cores_per_sm: int
    fma_per_clock_per_sm: int  # dense FP16/BF16 multiply-adds per clock, whole SM
    boost_clock_hz: float
    source: str


TENSOR_CORE_CLOCKS: dict[str, TensorCoreClock] = {
    "A100-80GB-SXM": TensorCoreClock(
        4,
        1024,
        1.41e9,
        "cite:nvidia2020ampere (four third-generation tensor cores per SM, 256 dense FP16 "
        "FMA per clock each; A100 boost clock 1,410 MHz)",
    ),
    "H100-SXM": TensorCoreClock(
        4,
        2048,
        1.83e9,
        "cite:nvidia2022hopper (four fourth-generation tensor cores per SM, twice A100's "
        "dense FP16 rate per SM per clock; H100 SXM5 tensor-core boost clock 1,830 MHz)",
    ),
}


@dataclass(frozen=True)
class Link:
    """A link technology: bytes/s in *each* direction, per GPU (NVLink) or per port."""

    name: str
    per_direction: float  # bytes/s, one direction
    detail: str
    source: str


def _pcie(gt_per_s: float, lanes: int = 16) -> float:
    """PCIe 3.0 and later: ``gt_per_s`` transfers per lane per second, 128b/130b encoding."""
    return gt_per_s * lanes * 128 / 130 / 8


LINKS: dict[str, Link] = {
    "nvlink3": Link(
        "NVLink 3 (A100)",
        600 * GB / 2,
        "12 links x 25 GB/s each way",
        "cite:nvidia2020ampere (twelve third-generation NVLinks, 600 GB/s total per GPU)",
    ),
    "nvlink4": Link(
        "NVLink 4 (H100, H200)",
        900 * GB / 2,
        "18 links x 25 GB/s each way",
        "cite:nvidia2022hopper (eighteen fourth-generation NVLinks, 900 GB/s total per GPU)",
    ),
    "nvlink5": Link(
        "NVLink 5 (B200, GB200)",
        1.8e12 / 2,
        "18 links x 50 GB/s each way",
        "cite:nvidia2024gb200 (fifth-generation NVLink, 1.8 TB/s per GPU)",
    ),
    "pcie4": Link(
        "PCIe 4.0 x16",
        _pcie(16e9),
        "16 GT/s per lane, 128b/130b",
        "cite:pcisig2019pcie (PCIe 4.0: 16 GT/s per lane; 5.0: 32 GT/s; 128b/130b encoding)",
    ),
    "pcie5": Link(
        "PCIe 5.0 x16",
        _pcie(32e9),
        "32 GT/s per lane, 128b/130b",
        "cite:pcisig2019pcie (PCIe 5.0: 32 GT/s per lane, 128b/130b encoding)",
    ),
    "ib-ndr": Link(
        "InfiniBand NDR",
        400e9 / 8,
        "4 lanes x 100 Gb/s",
        "cite:nvidia2024basepod (DGX H100/H200: ConnectX-7, up to 400 Gb/s, one per GPU)",
    ),
}

# GPUs that share one NVLink switch fabric (all-to-all at full NVLink bandwidth).
NVLINK_DOMAIN: dict[str, int] = {
    "HGX H100": 8,  # cite:nvidia2024basepod (DGX H100: eight GPUs in one NVLink domain)
    "GB200 NVL72": 72,  # cite:nvidia2024gb200 (72 Blackwell GPUs in one NVLink domain)
}


# --- added for training ---
# Accelerators that are not NVIDIA GPUs, kept out of GPUS (whose checks assume an NVIDIA part
# with fp16 = bf16 tensor cores): TPU v4, whose peak the training chapter needs for the MFU
# that PaLM reports. Figures the cited page does not give are None.
OTHER_ACCELERATORS: dict[str, GPU] = {
    "TPU-v4": GPU(
        name="TPU-v4",
        architecture="TPU v4",
        sms=None,
        flops={"bf16": 275 * TERA},
        hbm_bytes=32 * 2**30,
        hbm_bandwidth=1200 * GB,
        l2_bytes=None,
        smem_per_sm=None,
        nvlink_bandwidth=None,
        nic_bandwidth=None,
        tdp_watts=None,
        sources={
            "flops": "cite:googlecloud2024tpuv4 (key specifications: peak compute per chip 275 "
            "teraflops, bf16 or int8)",
            "hbm": "cite:googlecloud2024tpuv4 (HBM2 capacity and bandwidth: 32 GiB, 1200 GBps)",
        },
    ),
}


def other_accelerator(name: str) -> GPU:
    """An accelerator of :data:`OTHER_ACCELERATORS` (not an NVIDIA GPU)."""
    try:
        return OTHER_ACCELERATORS[name]
    except KeyError:
        raise KeyError(
            f"unknown accelerator {name!r}; known: {', '.join(OTHER_ACCELERATORS)}"
        ) from None
