"""run_ranks: real gloo ranks forked from the test process, results in rank order, no hangs."""

from __future__ import annotations

import os
import time

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

from atlas.labkit import RankCrashed, RankError, RankTimeout, run_ranks  # noqa: E402


def _all_reduce(rank: int, world_size: int, scale: float) -> tuple[float, int, int]:
    tensor = torch.tensor([scale * (rank + 1)])
    dist.all_reduce(tensor)
    return tensor.item(), dist.get_rank(), torch.get_num_threads()


def test_four_ranks_all_reduce_in_rank_order() -> None:
    results = run_ranks(_all_reduce, 4, 2.0)
    assert results == [(20.0, rank, 1) for rank in range(4)]
    assert not dist.is_initialized()  # the caller's process is untouched


def test_unpicklable_function_and_arguments_travel_by_fork() -> None:
    lock = __import__("threading").Lock()  # not picklable: it can only reach a rank by fork
    assert run_ranks(lambda rank, world_size, held: (rank, held.locked()), 2, lock) == [
        (0, False),
        (1, False),
    ]
    assert run_ranks(lambda rank, world_size: rank * world_size, 3) == [0, 3, 6]


def test_seeds_are_fixed_per_rank_and_repeatable() -> None:
    draw = lambda rank, world_size: torch.rand(2).tolist()  # noqa: E731
    first, second = run_ranks(draw, 2), run_ranks(draw, 2)
    assert first == second
    assert first[0] != first[1]


def _fails_on_rank_two(rank: int, world_size: int) -> None:
    if rank == 2:
        raise ValueError("rank two is broken")
    dist.barrier()  # the others wait for a peer that never comes


def test_exception_on_one_rank_names_it_with_its_traceback() -> None:
    started = time.monotonic()
    with pytest.raises(RankError) as info:
        run_ranks(_fails_on_rank_two, 4, timeout=30)
    assert time.monotonic() - started < 10  # the peers stuck in barrier were not waited for
    assert info.value.rank == 2
    assert "rank 2 of 4 raised" in str(info.value)
    assert "ValueError: rank two is broken" in str(info.value)
    assert "_fails_on_rank_two" in info.value.remote_traceback


def test_timeout_kills_every_rank() -> None:
    def hang(rank: int, world_size: int) -> None:
        if rank == 1:
            time.sleep(600)

    with pytest.raises(RankTimeout, match=r"rank\(s\) \[1\] of 2 still running after 1 s"):
        run_ranks(hang, 2, timeout=1)


def test_a_rank_that_dies_is_reported_as_a_crash() -> None:
    def die(rank: int, world_size: int) -> None:
        if rank == 1:
            os._exit(7)
        dist.barrier()

    with pytest.raises(RankCrashed, match=r"rank 1 of 2 died without a result \(exit status 7\)"):
        run_ranks(die, 2, timeout=20)


def test_segfault_is_named() -> None:
    def segv(rank: int, world_size: int) -> None:
        os.kill(os.getpid(), 11)

    with pytest.raises(RankCrashed, match=r"SIGSEGV"):
        run_ranks(segv, 1)


@pytest.mark.parametrize("world_size", [0, -1, 1.5, True])
def test_bad_world_size_is_a_value_error(world_size: object) -> None:
    with pytest.raises(ValueError, match="world_size must be a positive int"):
        run_ranks(lambda rank, ws: None, world_size)  # type: ignore[arg-type]
