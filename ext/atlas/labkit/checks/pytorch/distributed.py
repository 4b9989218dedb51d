"""Checks of the labs of ``pytorch/distributed.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

from typing import Any

import torch

ROLE = "check"


def collectives_match(rank: int, world: int) -> dict[str, bool]:
    """Run each collective on Gloo and compare this rank's result with the reference."""
    import torch.distributed as dist

    from atlas.labkit.pytorch import dist as ref

    gen = torch.Generator().manual_seed(7)
    inputs = [torch.randn(world * 3, generator=gen) for _ in range(world)]  # every rank's input
    mine = inputs[rank].clone()
    out = {}

    t = mine.clone()
    dist.all_reduce(t)
    out["all_reduce"] = torch.allclose(t, ref.all_reduce(inputs)[rank])

    t = mine.clone()
    dist.broadcast(t, src=2)
    out["broadcast"] = torch.equal(t, ref.broadcast(inputs, 2)[rank])

    gathered = torch.empty(world * mine.numel())
    dist.all_gather_single(gathered, mine)
    out["all_gather"] = torch.equal(gathered, ref.all_gather(inputs)[rank])

    shard = torch.empty(3)
    dist.reduce_scatter_single(shard, mine)
    out["reduce_scatter"] = torch.allclose(shard, ref.reduce_scatter(inputs)[rank])

    exchanged = torch.empty_like(mine)
    dist.all_to_all_single(exchanged, mine)
    out["all_to_all"] = torch.equal(exchanged, ref.all_to_all(inputs)[rank])

    t = mine.clone()
    work = dist.all_reduce(t, async_op=True)  # returns at once with a handle
    local = (mine * 2).sum()  # independent work overlaps with the reduction
    work.wait()  # after wait(), t holds the sum
    out["async_all_reduce"] = torch.allclose(t, ref.all_reduce(inputs)[rank]) and bool(
        local == (mine * 2).sum()
    )
    return out


def mesh_and_dtensor(rank: int, world: int) -> dict[str, Any]:
    """DeviceMesh groups, Shard sizes and the collective of each redistribution, on Gloo."""
    import warnings

    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.debug import CommDebugMode

    out: dict[str, Any] = {}
    mesh2d = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("dp", "tp"))
    out["groups"] = {
        name: dist.get_process_group_ranks(mesh2d.get_group(name)) for name in ("dp", "tp")
    }
    mesh = init_device_mesh("cpu", (world,))
    full = torch.arange(10.0 * 4).reshape(10, 4)
    shard = distribute_tensor(full, mesh, [Shard(0)])
    out["local_rows"] = shard.to_local().shape[0]
    out["gathered_ok"] = torch.equal(shard.full_tensor(), full)
    placements = {"S(0)": Shard(0), "S(1)": Shard(1), "R": Replicate(), "P": Partial()}
    comms = {}
    for src, dst in [("S(0)", "R"), ("P", "R"), ("P", "S(0)"), ("S(0)", "S(1)"), ("R", "S(0)")]:
        if src == "P":
            x = DTensor.from_local(torch.ones(8, 8) * (rank + 1), mesh, [placements[src]])
        else:
            x = distribute_tensor(torch.arange(64.0).reshape(8, 8), mesh, [placements[src]])
        with CommDebugMode() as debug, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = x.redistribute(mesh, [placements[dst]])
        counts = {str(k).split(".")[-1]: v for k, v in debug.get_comm_counts().items()}
        comms[f"{src}->{dst}"] = (counts, torch.equal(y.full_tensor(), x.full_tensor()))
    out["comms"] = comms
    gen = torch.Generator().manual_seed(3)
    a, b = torch.randn(4, 8, generator=gen), torch.randn(8, 6, generator=gen)
    prod = distribute_tensor(a, mesh, [Shard(1)]) @ distribute_tensor(b, mesh, [Shard(0)])
    out["matmul_placement"] = str(prod.placements[0])
    out["matmul_ok"] = torch.allclose(prod.full_tensor(), a @ b, atol=1e-5)
    return out
