"""The Nsight Compute page's taught code: register parsing of SASS, the model scheduler's
identities, and exposed communication on hand-made timelines."""

from __future__ import annotations

import math

from atlas.labkit.cuda.sass import parse_sass
from atlas.labkit.profiling.overlap import exposed, overlap_fraction, union
from atlas.labkit.profiling.scheduler import simulate
from atlas.labkit.profiling.stalls import dependencies, destination, stall_sites

LISTING = """
        Function : k
        /*0000*/                   LDG.E.128 R8, [R2.64] ;
        /*0010*/                   IMAD.WIDE R4, R6, R7, c[0x0][0x168] ;
        /*0020*/                   FADD R11, R11, R1 ;
        /*0030*/                   LDS R12, [R5] ;
        /*0040*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0050*/                   STG.E [R4.64], R12 ;
"""


def test_wide_load_writes_four_registers_and_its_consumer_reads_the_last():
    k = parse_sass(LISTING, "sm_90")["k"]
    assert destination(k.instructions[0]) == {8, 9, 10, 11}
    (dep,) = dependencies(k)
    assert dep.consumer is k.instructions[2] and dep.between == 1
    assert [i.opcode for i in stall_sites(k, "short_scoreboard")] == ["STG.E"]
    assert [i.opcode for i in stall_sites(k, "barrier")] == ["BAR.SYNC.DEFER_BLOCKING"]


def test_register_pairs_are_read_whole():
    k = parse_sass(LISTING.replace("STG.E [R4.64], R12", "STG.E [R11.64], RZ"), "sm_90")["k"]
    (dep,) = dependencies(k)
    assert dep.consumer is k.instructions[2]


def test_scheduler_states_add_up_and_follow_littles_law():
    for warps, latency in ((3, 10), (12, 10), (1, 1)):
        s = simulate(warps, latency, instructions=50)
        assert math.isclose(sum(s.per_issue(k) for k in s.warp_cycles), s.cycles_per_issue)
        assert math.isclose(s.cycles_per_issue, s.warps_active / s.issue_active)
        assert s.issued == warps * 50


def test_exposed_on_hand_made_timelines():
    assert union([(5, 7), (0, 3), (2, 4)]) == [(0, 4), (5, 7)]
    assert exposed([(0, 10)], []) == 10
    assert exposed([(0, 10)], [(0, 10)]) == 0
    assert exposed([(0, 10)], [(-5, 2), (8, 20)]) == 6
    assert overlap_fraction([], [(0, 1)]) == 1.0
