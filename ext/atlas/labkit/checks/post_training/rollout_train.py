"""Checks of the labs of ``post-training/rollout-train.md``.

The chapter's checks: upstream code at the pins, fakes, toy models.
"""

from __future__ import annotations

import types
from typing import Any

from atlas.labkit.checks.post_training.common import upstream_defs

ROLE = "check"


class _Future:
    def __init__(self, done_at: float, value: Any = None) -> None:
        self.done_at, self.value = done_at, value


class _Clock:
    """Simulated time, and ``ray`` as the loops use it: ``ray.get`` waits for a future."""

    def __init__(self) -> None:
        self.now = 0.0

    def get(self, x: Any) -> Any:
        if isinstance(x, list):
            return [self.get(item) for item in x]
        if isinstance(x, _Future):
            self.now = max(self.now, x.done_at)
            return x.value
        return x


class _Remote:
    def __init__(self, fn) -> None:
        self.remote = fn


class _FakeRollout:
    """The rollout manager: ``generate`` runs on its own engines for ``durations[i]`` and
    returns its batch tagged with the weight version the engines held when it started."""

    def __init__(self, clock: _Clock, durations: list[float]) -> None:
        self.clock, self.durations, self.version = clock, durations, 0

        def generate(i: int) -> _Future:
            return _Future(clock.now + durations[i], ("batch", i, self.version))

        def instant(*args: Any, **kwargs: Any) -> _Future:
            return _Future(clock.now)

        self.generate = _Remote(generate)
        for name in (
            "eval",
            "save",
            "offload",
            "onload_weights",
            "onload_kv",
            "dispose",
            "check_weights",
        ):
            setattr(self, name, _Remote(instant))


class _FakeActor:
    """The training group: ``async_train`` takes ``train`` seconds and records which weights
    made the batch and which the trainer held; ``update_weights`` takes ``sync`` seconds and
    hands the trainer's version to the engines."""

    def __init__(self, clock: _Clock, rollout: _FakeRollout, train: float, sync: float) -> None:
        self.clock, self.rollout, self.train, self.sync = clock, rollout, train, sync
        self.version, self.records, self.pushes = 0, [], []

    def async_train(self, rollout_id: int, data: Any, external_data: Any = None) -> list[_Future]:
        _, batch, made_by = data
        assert batch == rollout_id
        self.records.append((rollout_id, made_by, self.version))
        self.version += 1
        return [_Future(self.clock.now + self.train)]

    def update_weights(self) -> None:
        self.clock.now += self.sync
        self.rollout.version = self.version
        self.pushes.append(self.clock.now)

    def create(self, *args: Any, **kwargs: Any) -> None:
        return None

    save_model = clear_memory = create


def slime_loop(
    rollout: list[float], train: float, sync: float, mode: str
) -> list[tuple[int, float, int, int]]:
    """slime's ``train`` of ``train.py`` (``mode="sync"``) or ``train_async.py``
    (``"async"``) at the pin, run with fake actors on a simulated clock. Returns, per step,
    ``(index, time its weight push ended, version that made its batch, trainer version)``."""
    clock = _Clock()
    fake_rollout = _FakeRollout(clock, rollout)
    actor = _FakeActor(clock, fake_rollout, train, sync)
    args = types.SimpleNamespace(
        release_train=False,
        offload_rollout=False,
        offload_train=False,
        use_critic=False,
        check_weight_update_equal=False,
        num_rollout=len(rollout),
        eval_interval=None,
        start_rollout_id=0,
        save_interval=None,
        rollout_global_dataset=False,
        update_weights_interval=1,
        colocate=False,
        num_critic_only_steps=0,
    )
    misc = upstream_defs("slime", "slime/utils/misc.py", ("should_run_periodic_action",))
    namespace = {
        "ray": types.SimpleNamespace(get=clock.get),
        "configure_logger": lambda: None,
        "init_tracking": lambda args: None,
        "finish_tracking": lambda args: None,
        "create_placement_groups": lambda args: {"rollout": None, "actor": None},
        "create_rollout_manager": lambda args, pg: (fake_rollout, None),
        "create_training_models": lambda args, pgs, manager: (actor, None),
        "should_run_periodic_action": misc["should_run_periodic_action"],
    }
    path = "train.py" if mode == "sync" else "train_async.py"
    scope = upstream_defs("slime", path, ("train",), namespace)
    scope["train"](args)
    pushes = actor.pushes[1:]  # the first push is the initial one, before the loop
    return [(i, pushes[i], made_by, version) for (i, made_by, version) in actor.records]


def slime_placement(train_gpus: int, rollout_gpus: int, colocate: bool) -> int:
    """GPUs slime's ``_get_placement_group_layout`` (placement_group.py, at the pin) reserves
    for one node of ``train_gpus`` training GPUs and ``rollout_gpus`` engine GPUs."""
    fn = upstream_defs("slime", "slime/ray/placement_group.py", ("_get_placement_group_layout",))[
        "_get_placement_group_layout"
    ]
    args = types.SimpleNamespace(
        actor_num_nodes=1,
        actor_num_gpus_per_node=train_gpus,
        debug_train_only=False,
        rollout_external=False,
        debug_rollout_only=False,
        colocate=colocate,
        rollout_num_gpus=rollout_gpus,
    )
    return fn(args)[0]
