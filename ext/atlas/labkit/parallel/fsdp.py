"""How FSDP1 and FSDP2 cut parameters into shards, and the elements one training step moves.

FSDP1 flattens every parameter of a wrapped unit into one ``FlatParameter`` and gives each rank a
contiguous 1/N of that flat buffer, so a rank's shard may start in the middle of one weight and
end in the middle of another. FSDP2 (``fully_shard``) shards each parameter on its own, on dim 0,
as ``torch.chunk`` cuts it, and pads every shard to the first (largest) one so that one
all-gather of equal pieces serves a whole parameter group. These functions compute both layouts
and the traffic of a step from the shapes alone; the checks in
``atlas.labkit.checks.parallel.fsdp`` compare them with torch's own code running on gloo ranks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

ROLE = "taught"

Shape = tuple[int, ...]

__all__ = [
    "dim0_rows",
    "flat_shard_spans",
    "fsdp_step_elements",
    "hsdp_step_elements",
    "padded_group_numel",
    "step_bytes_sent",
]


def dim0_rows(rows: int, world: int) -> list[int]:
    """Rows of a dim-0 shard on each of ``world`` ranks, as ``torch.chunk`` cuts them.

    Every rank gets ``ceil(rows / world)`` rows until they run out; the last ranks get the
    remainder or nothing (10 rows over 4 ranks: 3, 3, 3, 1).
    """
    per = math.ceil(rows / world)
    return [max(0, min(per, rows - r * per)) for r in range(world)]


def padded_group_numel(shapes: Sequence[Shape], world: int) -> int:
    """Elements of one parameter group's all-gather output (and reduce-scatter input).

    Each parameter is padded to ``world`` copies of its largest shard, ``ceil(rows / world)``
    rows of its trailing size; the group's collective moves the sum of these.
    """
    total = 0
    for shape in shapes:
        rest = math.prod(shape[1:])
        total += math.ceil(shape[0] / world) * world * rest
    return total


def fsdp_step_elements(
    groups: Sequence[Sequence[Shape]], world: int, reshard_after_forward: bool = True
) -> dict[str, int]:
    """Elements one rank passes to FSDP2's collectives in one forward and backward.

    Per group: one all-gather before forward, a second before backward when the forward's
    unsharded parameters were freed (``reshard_after_forward=True``), and one reduce-scatter of
    the gradients. Each is counted by the size of its larger buffer (the all-gather's output,
    the reduce-scatter's input); a ring sends ``(world - 1) / world`` of it from each rank.
    """
    padded = [padded_group_numel(g, world) for g in groups]
    gathers = 2 if reshard_after_forward else 1
    return {
        "all_gather": gathers * sum(padded),
        "reduce_scatter": sum(padded),
    }


def hsdp_step_elements(
    groups: Sequence[Sequence[Shape]], shard: int, replicate: int
) -> dict[str, int]:
    """The same for HSDP on a ``replicate x shard`` mesh.

    All-gathers and reduce-scatters stay inside a shard group of ``shard`` ranks; what crosses
    the replicas is one all-reduce per group of the reduced shard, ``1/shard`` of the padded
    gradient. With one replica there is no all-reduce.
    """
    elements = fsdp_step_elements(groups, shard)
    shard_numel = sum(padded_group_numel(g, shard) for g in groups) // shard
    elements["all_reduce"] = shard_numel if replicate > 1 else 0
    return elements


def step_bytes_sent(
    params: float, shard: int, replicate: int, param_bytes: int = 2, reduce_bytes: int = 4
) -> dict[str, float]:
    """Bytes one GPU sends per step with HSDP (``replicate = 1``: plain FSDP), ring algorithms.

    Inside the shard group: two all-gathers of the parameters in ``param_bytes`` and one
    reduce-scatter of the gradients in ``reduce_bytes``, each sending ``(shard - 1) / shard`` of
    the full size. Across replicas: an all-reduce of the reduced shard, ``params / shard``
    elements, which sends twice ``(replicate - 1) / replicate`` of it. Padding is ignored (it is
    at most ``shard - 1`` rows a parameter).
    """
    inside = params * (shard - 1) / shard * (2 * param_bytes + reduce_bytes)
    across = 2 * (params / shard) * (replicate - 1) / replicate * reduce_bytes
    return {"inside": inside, "across": across}


def flat_shard_spans(numels: Sequence[int], world: int) -> list[list[tuple[int, int, int]]]:
    """FSDP1's layout: for each rank, the ``(param, start, stop)`` element ranges it owns.

    The parameters are concatenated into one flat buffer, padded at the right to a multiple of
    ``world``, and cut into ``world`` equal contiguous pieces; a piece covers whatever
    parameters (or parts of them) fall into its range.
    """
    total = sum(numels)
    per = math.ceil(total / world)
    offsets = [0]
    for n in numels:
        offsets.append(offsets[-1] + n)
    spans: list[list[tuple[int, int, int]]] = []
    for r in range(world):
        lo, hi = r * per, min((r + 1) * per, total)
        mine = []
        for p, n in enumerate(numels):
            start, stop = max(lo, offsets[p]), min(hi, offsets[p] + n)
            if start < stop:
                mine.append((p, start - offsets[p], stop - offsets[p]))
        spans.append(mine)
    return spans
