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
        nic_bandwidth=200e9 / 8,
        tdp_watts=400,
        sources={
            "flops": "cite:nvidia2020a100 (A100 80GB SXM column; TF32/BF16/FP16 dense, the "
            "datasheet's starred figures are sparse)",
            "hbm": "cite:nvidia2020a100 (80GB HBM2e, 2,039 GB/s)",
            "nvlink": "cite:nvidia2020a100 (NVLink 600 GB/s)",
            "tdp": "cite:nvidia2020a100 (400 W)",
            "sms": "cite:nvidia2020ampere (Table 'A100 SXM4': 108 SMs, 40 MB L2, up to 164 KB "
            "shared memory per SM)",
            "nic": "cite:nvidia2020dgxa100 (DGX A100: eight single-port ConnectX-6 200 Gb/s "
            "for the compute fabric, one per GPU)",
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
            "nic": "cite:nvidia2023dgxh100 (DGX H100: eight ConnectX-7 400 Gb/s, one per GPU)",
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
            "flops": "cite:nvidia2024h200 (H200 SXM: the H100 SXM tensor figures, sparse ones "
            "halved here)",
            "hbm": "cite:nvidia2024h200 (141 GB HBM3e, 4.8 TB/s)",
            "nvlink": "cite:nvidia2024h200 (NVLink 900 GB/s)",
            "tdp": "cite:nvidia2024h200 (up to 700 W)",
            "sms": "cite:nvidia2022hopper (the same GH100 SXM5 configuration as H100)",
            "nic": "cite:nvidia2023dgxh100 (DGX H100/H200: ConnectX-7 400 Gb/s per GPU)",
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
        hbm_bandwidth=8e12,
        l2_bytes=None,
        smem_per_sm=228 * KIB,
        nvlink_bandwidth=1.8e12,
        nic_bandwidth=400e9 / 8,
        tdp_watts=1000,
        sources={
            "flops": "cite:nvidia2024hgx (HGX B200, eight GPUs: FP4 144 PF, FP8 72 PF, "
            "BF16/FP16 36 PF, TF32 18 PF with sparsity; FP64 296 TF; divided by 8 and the "
            "sparse ones halved)",
            "hbm": "cite:nvidia2024hgx (HGX B200: 1.4 TB and 64 TB/s over eight GPUs)",
            "nvlink": "cite:nvidia2024hgx (fifth-generation NVLink, 1.8 TB/s per GPU)",
            "tdp": "cite:nvidia2024dgxb200 (DGX B200 GPU power 1,000 W each)",
            "smem": "cite:nvidia2025blackwelltuning (compute capability 10.0: up to 228 KB "
            "shared memory per SM)",
            "nic": "cite:nvidia2024dgxb200 (DGX B200: eight ConnectX-7 400 Gb/s, one per GPU)",
        },
    )
)

_add(
    GPU(
        name="GB200",
        architecture="Blackwell",
        sms=None,
        flops={
            "fp64": 45 * TERA,
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
        tdp_watts=None,
        sources={
            "flops": "cite:nvidia2024gb200 (GB200 NVL72, 72 GPUs: FP4 1,440 PF, FP8 720 PF, "
            "BF16/FP16 360 PF, TF32 180 PF with sparsity, FP64 3,240 TF; per GPU, sparse ones "
            "halved)",
            "hbm": "cite:nvidia2024gb200 (13.4 TB HBM3e and 576 TB/s over 72 GPUs)",
            "nvlink": "cite:nvidia2024gb200 (130 TB/s NVLink over 72 GPUs: 1.8 TB/s each)",
            "smem": "cite:nvidia2025blackwelltuning (compute capability 10.0: up to 228 KB "
            "shared memory per SM)",
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
