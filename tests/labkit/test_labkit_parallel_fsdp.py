"""The FSDP layouts of ``atlas.labkit.parallel.fsdp`` against torch's own chunking."""

from __future__ import annotations

import math

import pytest
import torch
from atlas.labkit.checks.parallel.fsdp import flat_layout_matches_torch
from atlas.labkit.parallel.fsdp import (
    dim0_rows,
    fsdp_step_elements,
    hsdp_step_elements,
    padded_group_numel,
)


@pytest.mark.parametrize("rows", [1, 3, 7, 10, 16, 33])
@pytest.mark.parametrize("world", [1, 2, 3, 4, 8])
def test_dim0_rows_is_torch_chunk(rows: int, world: int) -> None:
    chunks = torch.empty(rows).chunk(world)
    expected = [c.numel() for c in chunks] + [0] * (world - len(chunks))
    assert dim0_rows(rows, world) == expected


def test_padded_size_is_world_times_largest_shard() -> None:
    shapes = [(10, 6), (10,), (7, 3, 2)]
    expected = sum(max(dim0_rows(s[0], 4)) * 4 * math.prod(s[1:]) for s in shapes)
    assert padded_group_numel(shapes, 4) == expected == 72 + 12 + 48


def test_step_elements() -> None:
    groups = [[(10, 6), (10,)], [(3, 7)]]
    assert fsdp_step_elements(groups, 4) == {"all_gather": 2 * 112, "reduce_scatter": 112}
    assert fsdp_step_elements(groups, 4, False)["all_gather"] == 112
    assert hsdp_step_elements(groups, 2, 1)["all_reduce"] == 0
    assert hsdp_step_elements(groups, 2, 3)["all_reduce"] == (70 + 28) // 2


@pytest.mark.parametrize("numels", [[70, 10], [5, 3, 11], [1], [9, 9, 9]])
@pytest.mark.parametrize("world", [1, 2, 3, 4, 7])
def test_flat_spans_match_fsdp1(numels: list[int], world: int) -> None:
    assert flat_layout_matches_torch(numels, world)
