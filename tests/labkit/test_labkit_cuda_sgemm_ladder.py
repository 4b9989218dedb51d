"""The SGEMM ladder's double-buffering and warp-tiling steps (kernels/cuda-sgemm.md): one
iteration of a loop read off the SASS, and the CPU model catching a double-buffered loop whose
single barrier is not enough because the two buffers were made one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from atlas.labkit.checks.kernels.cuda_common import KERNELS, build
from atlas.labkit.checks.kernels.cuda_sgemm import TILED, sgemm_findings
from atlas.labkit.cuda.sass import parse_sass

SASS = """
        Function : k
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   LDG.E.128 R4, [R2.64] ;
        /*0020*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0030*/                   LDS.128 R8, [R0] ;
        /*0040*/                   FFMA R12, R8, R9, R12 ;
        /*0050*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0060*/              @P0  BRA 0x30 ;
        /*0070*/                   FFMA R12, R8, R9, R12 ;
        /*0080*/                   EXIT ;
        /*0090*/                   BRA 0x90;
"""


pytestmark = pytest.mark.usefixtures("cuda_compile_cache")


def test_a_loop_body_runs_from_the_branch_target_to_the_branch() -> None:
    k = parse_sass(SASS, "sm_90")["k"]
    (body,) = k.loop_bodies()  # the branch-to-itself at the end is no loop
    assert [i.offset for i in body.instructions] == [0x30, 0x40, 0x50, 0x60]
    assert body.counts(("BAR.SYNC", "FFMA", "LDG.E.128")) == {
        "BAR.SYNC": 1,
        "FFMA": 1,
        "LDG.E.128": 0,
    }
    assert k.count("BAR.SYNC") == 2 and k.count("FFMA") == 2  # the whole kernel counts both


def test_one_buffer_with_one_barrier_is_wrong_on_the_cpu_model(tmp_path: Path) -> None:
    source = (KERNELS / "sgemm_ladder.cu").read_text(encoding="utf-8")
    one = source.replace("As[cur ^ 1], Bs[cur ^ 1]", "As[cur], Bs[cur]")
    assert one != source
    (tmp_path / "sgemm_ladder.cu").write_text(one, encoding="utf-8")
    found = sgemm_findings(
        build("sgemm_ladder.cu", archs=(), folder=tmp_path), ("sgemm_dbuf",), TILED
    )
    right = sgemm_findings(build("sgemm_ladder.cu", archs=()), ("sgemm_dbuf",), TILED)
    assert right["sgemm_dbuf"] == []
    assert any("differ from torch" in f for f in found["sgemm_dbuf"]), found
