"""The CUDA C machinery (atlas.labkit.cuda): parsing ptxas and SASS, the CPU thread model, and
what a broken kernel does to a build: it fails at the page and line of its lab, with the
compiler's message or the wrong number, and no traceback.

nvcc and cuobjdump come from the pinned wheels; the tests that run them take a few seconds each.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from atlas.labkit.checks.kernels.cuda_common import KERNELS, build, sass_findings
from atlas.labkit.checks.kernels.cuda_reduce import LADDER, Step, cpu_findings
from atlas.labkit.cuda.cpu import KernelRunError, build_cpu, kernel_signatures
from atlas.labkit.cuda.nvcc import CompileError, compile_cubin
from atlas.labkit.cuda.ptxas import ReportError, parse_report
from atlas.labkit.cuda.sass import parse_sass

REDUCE = (KERNELS / "reduce.cu").read_text(encoding="utf-8")


pytestmark = pytest.mark.usefixtures("cuda_compile_cache")


REPORT = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'a' for 'sm_90'
ptxas info    : Function properties for a
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 25.956 ms
ptxas info    : Compiling entry function 'b' for 'sm_90'
ptxas info    : Function properties for b
    48 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, 380 bytes cmem[0]
"""

SASS = """
\tcode for sm_90
\t\tFunction : k
        /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x0000 */
        /*0010*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;  /* 0x0000 */
        /*0020*/              @!P0 LDG.E R8, desc[UR4][R2.64] ;           /* 0x0000 */
        /*0030*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;           /* 0x0000 */
        /*0040*/                   REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R9 ;
"""


# Three realistic bugs, each one exact text of reduce.cu and its replacement.
LOAD = "  s[tid] = i < n ? x[i] : 0.0f;\n  __syncthreads();\n  for (unsigned stride = 1;"
TREE = "  s[tid] = v;\n  __syncthreads();\n  for (unsigned stride = blockDim.x / 2; stride > 0;"
STEP = "    if (tid < stride) s[tid] += s[tid + stride];\n    __syncthreads();\n  }\n  if (tid =="
MUTATIONS = {
    "syntax": (LOAD, LOAD.replace("0.0f;", "0.0f", 1)),  # in reduce_interleaved
    "nosync": (TREE, TREE.replace("  __syncthreads();\n", "")),  # in reduce_first_add
    "index": (STEP, STEP.replace("tid + stride]", "tid + stride + 1]")),  # reduce_sequential
}


def mutated(folder: Path, bug: str, name: str = "reduce.cu") -> Path:
    """A copy of reduce.cu with the first occurrence of one of ``MUTATIONS`` applied."""
    old, new = MUTATIONS[bug]
    assert old in REDUCE, old
    (folder / name).write_text(REDUCE.replace(old, new, 1), encoding="utf-8")
    return folder


def test_ptxas_report_is_parsed_per_kernel() -> None:
    found = parse_report(REPORT)
    assert (found["a"].registers, found["a"].shared, found["a"].barriers) == (10, 1024, 1)
    assert not found["a"].spills
    b = found["b"]
    assert (b.registers, b.local, b.spill_stores, b.spill_loads, b.constant) == (
        255,
        48,
        8,
        12,
        380,
    )
    assert b.spills
    with pytest.raises(ReportError):
        parse_report("ptxas info : 0 bytes gmem\n")


def test_sass_patterns_match_on_modifier_boundaries() -> None:
    k = parse_sass(SASS, "sm_90")["k"]
    assert k.count("LDG.E.128") == 1  # LDG.E.128.CONSTANT
    assert k.count("LDG.E") == 2  # both loads
    assert k.count("LDG.E.12") == 0  # not a prefix of a modifier
    assert k.count("BAR.SYNC") == 1
    assert k.count("RED") == 0 and k.count("REDG") == 1
    assert k.instructions[2].predicate == "@!P0"


def test_kernel_signatures_are_read_from_the_source() -> None:
    sig = kernel_signatures(REDUCE)
    not_steps = {"reduce_last_warp_volatile", "reduce_shuffle_warp0"}  # variants, not steps
    assert [s.kernel for s in LADDER] == [k for k in sig if k not in not_steps]
    params = sig["reduce_atomic"]
    assert [(p.type, p.name) for p in params] == [
        ("const float* __restrict__", "x"),
        ("float* __restrict__", "out"),
        ("int", "n"),
    ]


def test_a_syntax_error_is_nvccs_message_at_the_file_and_line(tmp_path: Path) -> None:
    folder = mutated(tmp_path, "syntax")
    with pytest.raises(CompileError) as nvcc:
        compile_cubin(folder / "reduce.cu", "sm_90")
    assert re.search(r"reduce\.cu\(\d+\): error: expected a \";\"", str(nvcc.value)), nvcc.value
    with pytest.raises(CompileError) as gxx:
        build_cpu(folder / "reduce.cu")
    assert re.search(r"reduce\.cu:\d+:\d+: error: expected ';'", str(gxx.value)), gxx.value


def test_a_missing_syncthreads_gives_a_wrong_sum_on_the_cpu_model(tmp_path: Path) -> None:
    mutated(tmp_path, "nosync")
    b = build("reduce.cu", archs=(), folder=tmp_path)
    found = cpu_findings(b, (Step("reduce_first_add", 512), Step("reduce_sequential", 256)))
    assert found["reduce_sequential"] == []  # untouched
    assert found["reduce_first_add"] and "torch.sum gives" in found["reduce_first_add"][0]


def test_a_wrong_index_gives_a_wrong_sum_and_an_out_of_bounds_write_is_named(
    tmp_path: Path,
) -> None:
    mutated(tmp_path, "index")
    source = (tmp_path / "reduce.cu").read_text(encoding="utf-8")
    atomic = "if (threadIdx.x == 0) atomicAdd(out, v);"
    source = source.replace(atomic, "if (threadIdx.x == 0) out[blockIdx.x + gridDim.x] = v;")
    (tmp_path / "reduce.cu").write_text(source, encoding="utf-8")
    b = build("reduce.cu", archs=(), folder=tmp_path)
    found = cpu_findings(b, (Step("reduce_sequential", 256), Step("reduce_atomic", None)))
    assert "torch.sum gives" in found["reduce_sequential"][0]
    assert "past the end of argument out" in found["reduce_atomic"][0], found


def test_a_deadlock_is_a_message_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(
        'extern "C" __global__ void k(float* out, int n) {\n'
        "  if (threadIdx.x < 16) __syncwarp(0xffffffffu);\n"
        "  out[threadIdx.x] = n;\n}\n",
        encoding="utf-8",
    )
    cpu = build_cpu(tmp_path / "k.cu")
    out = torch.zeros(32)
    with pytest.raises(KernelRunError, match="exited"):
        cpu.launch("k", 1, 32, out, 1)
    with pytest.raises(KernelRunError, match="deadlock"):
        cpu.launch("k", 1, 16, out, 3)  # 16 threads: the mask names lanes that do not exist


def test_the_volatile_last_warp_is_wrong_without_lock_step_and_the_synced_one_right() -> None:
    b = build("reduce.cu", archs=())
    found = cpu_findings(b, (Step("reduce_last_warp_volatile", 512), Step("reduce_last_warp", 512)))
    assert found["reduce_last_warp"] == []
    assert len(found["reduce_last_warp_volatile"]) == 4  # both sizes, both orders


def test_the_shuffle_step_has_ten_shuffles_and_one_barrier_on_both_architectures() -> None:
    b = build("reduce.cu", archs=("sm_80", "sm_90"))
    claims = {"reduce_shuffle": {"SHFL.DOWN": 10, "BAR.SYNC": 1, "LDS": 1}}
    assert sass_findings(b, claims) == {"sm_80": [], "sm_90": []}


BROKEN_PAGE = """# Broken kernels

```{lab} A syntax error
>>> from pathlib import Path
>>> from atlas.labkit.checks.kernels.cuda_common import build
>>> build("syntax.cu", archs=("sm_90",), folder=Path(FOLDER)).errors
{'sm_90': [], 'cpu': []}
```

```{lab} A missing barrier
>>> from atlas.labkit.checks.kernels.cuda_reduce import Step, cpu_findings
>>> b = build("nosync.cu", archs=(), folder=Path(FOLDER))
>>> cpu_findings(b, (Step("reduce_first_add", 512),))
{'reduce_first_add': []}
```

```{lab} A wrong index
>>> b = build("index.cu", archs=(), folder=Path(FOLDER))
>>> cpu_findings(b, (Step("reduce_sequential", 256),))
{'reduce_sequential': []}
```
"""


def test_a_broken_kernel_fails_the_build_at_its_lab_with_a_clear_message(tmp_path: Path) -> None:
    from tinybook import build_book

    kernels = tmp_path / "kernels"
    kernels.mkdir()
    for bug in MUTATIONS:
        mutated(kernels, bug, f"{bug}.cu")
    page = BROKEN_PAGE.replace("FOLDER", repr(str(kernels)))
    _, warnings = build_book(tmp_path / "book", {"index.md": page}, "atlas_labs_timeout = 120\n")
    errors = [w for w in warnings.split("index.md:")[1:] if "ERROR: lab" in w]
    assert len(errors) == 3, warnings
    syntax, nosync, index = errors
    assert syntax.startswith("6: ERROR") and 'expected a ";"' in syntax and "syntax.cu(" in syntax
    assert nosync.startswith("13: ERROR") and "torch.sum gives" in nosync
    assert index.startswith("19: ERROR") and "torch.sum gives" in index
    assert "Traceback" not in warnings
