"""One warp scheduler, cycle by cycle: where Warp State Statistics' numbers come from.

Each cycle a scheduler (one per SM sub-partition, ``smsp``) issues at most one instruction from
one *eligible* warp. Every active warp spends the cycle in exactly one state: *selected* (it
issued), *not selected* (eligible, but another warp issued), or stalled for a reason (here the
one reason of a dependent chain: waiting ``latency`` cycles for its previous instruction's
result, a long scoreboard when that instruction is a global load). Nsight Compute divides each
state's warp-cycles by the instructions issued; the states' values then add up to the warp
cycles per issued instruction, and Little's law ties that to the issue rate.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLE = "taught"


@dataclass(frozen=True)
class WarpStates:
    """What a scheduler's counters would read after a run."""

    cycles: int
    issued: int
    warp_cycles: dict[str, int]  # per state, summed over warps

    @property
    def issue_active(self) -> float:
        """Instructions issued per active cycle (``smsp__issue_active.avg.per_cycle_active``)."""
        return self.issued / self.cycles

    @property
    def warps_active(self) -> float:
        """Average active warps per cycle (``smsp__warps_active.avg.per_cycle_active``)."""
        return sum(self.warp_cycles.values()) / self.cycles

    def per_issue(self, state: str) -> float:
        """Cycles in ``state`` per issued instruction, the Warp State Statistics bar."""
        return self.warp_cycles[state] / self.issued

    @property
    def cycles_per_issue(self) -> float:
        """``smsp__average_warp_latency_per_inst_issued.ratio``: all warp-cycles per issue."""
        return sum(self.warp_cycles.values()) / self.issued


def simulate(warps: int, latency: int, instructions: int = 200) -> WarpStates:
    """``warps`` warps, each issuing ``instructions`` instructions of a dependent chain whose
    result arrives ``latency`` cycles after issue (``latency >= 1``). The scheduler picks the
    eligible warp that has waited longest, so no warp starves."""
    ready = [0] * warps  # the cycle from which each warp may issue again
    left = [instructions] * warps
    last = [0] * warps  # when each warp last issued: oldest first
    states = {"selected": 0, "not_selected": 0, "long_scoreboard": 0}
    cycle = issued = 0
    while any(left):
        active = [w for w in range(warps) if left[w]]
        eligible = [w for w in active if ready[w] <= cycle]
        if eligible:
            w = min(eligible, key=lambda v: (last[v], v))
            left[w] -= 1
            ready[w], last[w] = cycle + latency, cycle
            issued += 1
            states["selected"] += 1
            states["not_selected"] += len(eligible) - 1
        states["long_scoreboard"] += len(active) - len(eligible)
        cycle += 1
    return WarpStates(cycle, issued, states)
