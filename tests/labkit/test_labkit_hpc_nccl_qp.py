"""The QP state machine of the verbs model, and NCCL's tuner compiled at the pin (p38 audit)."""

from __future__ import annotations

import pytest
from atlas.labkit.hpc import verbs
from atlas.labkit.pinned import UpstreamUnavailable


def test_qp_refuses_steps_out_of_order_and_missing_attributes() -> None:
    a = verbs.QueuePair(verbs.Nic(), verbs.CompletionQueue())
    b = verbs.QueuePair(verbs.Nic(), verbs.CompletionQueue())
    with pytest.raises(verbs.QpStateError):
        a.post_recv(verbs.WorkRequest(0, "RECV"))
    with pytest.raises(verbs.QpStateError):
        a.modify("RTS", set(verbs.QP_TRANSITIONS[("RTR", "RTS")]))
    a.modify("INIT", set(verbs.QP_TRANSITIONS[("RESET", "INIT")]))
    a.post_recv(verbs.WorkRequest(0, "RECV"))
    with pytest.raises(verbs.QpStateError):
        a.post_send(verbs.WorkRequest(1, "SEND"))
    rtr = set(verbs.QP_TRANSITIONS[("INIT", "RTR")])
    with pytest.raises(verbs.QpStateError):
        a.modify("RTR", rtr - {"AV"}, b)
    with pytest.raises(verbs.QpStateError):
        a.modify("RTR", rtr)  # no peer: no address vector to use
    a.modify("RTR", rtr, b)
    a.modify("RTS", set(verbs.QP_TRANSITIONS[("RTR", "RTS")]))
    assert a.state == "RTS" and a.peer is b


def test_connect_brings_both_sides_to_rts() -> None:
    a = verbs.QueuePair(verbs.Nic(), verbs.CompletionQueue())
    b = verbs.QueuePair(verbs.Nic(), verbs.CompletionQueue())
    a.connect(b)
    assert (a.state, b.state, a.peer, b.peer) == ("RTS", "RTS", b, a)


def test_nccl_masks_equal_the_model() -> None:
    from atlas.labkit.checks.hpc.rdma import nccl_qp_masks

    try:
        masks, _ = nccl_qp_masks()
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    assert {to: masks[to] for (_, to) in verbs.QP_TRANSITIONS} == {
        to: need for (_, to), need in verbs.QP_TRANSITIONS.items()
    }


def test_nccl_ring_is_alpha_beta_plus_base() -> None:
    from atlas.labkit.checks.hpc.nccl_tuning import nccl_tuner

    try:
        t = nccl_tuner(nodes=4, ppn=1, bus_gbps=40.0)
    except UpstreamUnavailable as exc:
        pytest.skip(str(exc))
    n = 4
    # AllReduce (4), Ring (1), Simple (2): 2(n-1) network steps of 14 us over the 8.4 us base.
    assert t.latency[4][1][2] == pytest.approx(8.4 + 2 * (n - 1) * 14.0, rel=1e-6)
    assert t.bandwidth[4][1][2] == pytest.approx(40.0 * n / (2 * (n - 1)), rel=1e-6)
    assert t.time("PAT", "Simple", 2**20, "AllReduce") == -1.0  # PAT never does all-reduce
