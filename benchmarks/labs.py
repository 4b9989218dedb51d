"""Labs runner against the obvious baselines, measured side by side in one run.

(a) 50 trivial labs, one page each, through the zygote runner, against 50 fresh
    ``python -c "import torch; ..."`` processes (what running each lab in its own interpreter
    costs). Target: at most 50 ms of overhead per lab.
(b) a 4-rank gloo all_reduce through ``run_ranks`` (ranks forked from a warm process) against
    ``torch.multiprocessing.spawn``; and the same through a whole lab (zygote start included).
    Target: at most 1.5 s end to end.
(c) the sandbox (atlas.labs.sandbox): the same 50 labs under Landlock against the detecting
    fallback (a snapshot of the book's tree before and after each lab), with the time of one
    snapshot of this repository.

Run: ``.venv/bin/python benchmarks/labs.py``. The last line printed is one JSON object.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ext"))

from atlas.labs.directive import parse_examples  # noqa: E402
from atlas.labs.model import LabSpec  # noqa: E402
from atlas.labs.runner import Job, LabRunner  # noqa: E402
from atlas.labs.sandbox import MODE_VARIABLE, Snapshot, describe  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

LABS = 50
TRIVIAL = ">>> import torch\n>>> int(torch.ones(2).sum())\n2\n"
ALL_REDUCE_LAB = """\
>>> import torch, torch.distributed as dist
>>> from atlas.labkit import run_ranks
>>> def total(rank, world_size):
...     t = torch.tensor([float(rank)])
...     dist.all_reduce(t)
...     return t.item()
>>> run_ranks(total, 4)
[6.0, 6.0, 6.0, 6.0]
"""


def job(name: str, text: str, book_root: str = "") -> Job:
    spec = LabSpec(name, 0, "lab", name, text, 1, 1, parse_examples(text, 1), 60.0)
    return Job(name, name, [spec], book_root=book_root)


def run_jobs(jobs: list[Job], log: Path) -> tuple[float, float, list[str]]:
    """Seconds to start the zygote, seconds to run the jobs, and their statuses."""
    started = time.perf_counter()
    with LabRunner(log, jobs=1) as runner:
        ready = time.perf_counter()
        statuses = [lab.status for _, page in runner.run(jobs) for lab in page.labs]
        finished = time.perf_counter()
    return ready - started, finished - ready, statuses


def fresh_processes(count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        subprocess.run(
            [sys.executable, "-c", "import torch; assert int(torch.ones(2).sum()) == 2"],
            check=True,
        )
    return time.perf_counter() - started


def _spawned_rank(rank: int, world_size: int, port: int) -> None:
    import torch
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    tensor = torch.tensor([float(rank)])
    dist.all_reduce(tensor)
    assert tensor.item() == 6.0
    dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def spawn_all_reduce() -> float:
    import torch.multiprocessing as mp

    started = time.perf_counter()
    mp.spawn(_spawned_rank, args=(4, free_port()), nprocs=4, join=True)
    return time.perf_counter() - started


def _forked_rank(rank: int, world_size: int) -> float:
    import torch
    import torch.distributed as dist

    tensor = torch.tensor([float(rank)])
    dist.all_reduce(tensor)
    return tensor.item()


def run_ranks_all_reduce() -> float:
    from atlas.labkit import run_ranks

    started = time.perf_counter()
    assert run_ranks(_forked_rank, 4) == [6.0] * 4
    return time.perf_counter() - started


def sandbox_costs(log: Path) -> dict[str, float]:
    """Milliseconds a lab (zygote start excluded) under each sandbox, and one snapshot."""
    jobs = [job(f"box{i}", TRIVIAL, str(REPO)) for i in range(LABS)]
    previous = os.environ.pop(MODE_VARIABLE, None)
    try:
        _, enforced, statuses = run_jobs(jobs, log)
        assert statuses == ["passed"] * LABS, statuses
        os.environ[MODE_VARIABLE] = "detect"
        _, detected, statuses = run_jobs(jobs, log)
        assert statuses == ["passed"] * LABS, statuses
    finally:
        os.environ.pop(MODE_VARIABLE, None)
        if previous is not None:
            os.environ[MODE_VARIABLE] = previous
    started = time.perf_counter()
    files = len(Snapshot.of(REPO).files)
    snapshot = time.perf_counter() - started
    return {
        "enforced_ms": 1000 * enforced / LABS,
        "detected_ms": 1000 * detected / LABS,
        "snapshot_ms": 1000 * snapshot,
        "files": files,
    }


def main() -> None:
    log = Path(tempfile.mkdtemp(prefix="labs-bench-")) / "worker.log"
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")

    startup, ours, statuses = run_jobs([job(f"page{i}", TRIVIAL) for i in range(LABS)], log)
    assert statuses == ["passed"] * LABS, statuses
    baseline = fresh_processes(LABS)
    per_lab_ms = 1000 * (startup + ours) / LABS
    per_lab_warm_ms = 1000 * ours / LABS
    per_fresh_ms = 1000 * baseline / LABS
    print(f"(a) {LABS} trivial labs, one page each, sequential")
    print(f"    zygote runner: {startup:.2f} s zygote start + {ours:.2f} s for the labs")
    print(f"    = {per_lab_ms:.1f} ms a lab all in, {per_lab_warm_ms:.1f} ms a lab once warm")
    print(f"    fresh python -c 'import torch': {baseline:.2f} s = {per_fresh_ms:.0f} ms a lab")
    print(f"    ratio fresh / runner: {baseline / (startup + ours):.1f}x all in")

    import torch  # noqa: F401 - the warm process run_ranks forks from, as in a lab worker

    forked = min(run_ranks_all_reduce() for _ in range(3))
    spawned = spawn_all_reduce()
    lab_startup, lab_run, lab_status = run_jobs([job("ranks", ALL_REDUCE_LAB)], log)
    assert lab_status == ["passed"], lab_status
    lab_total = lab_startup + lab_run
    print("(b) 4-rank gloo all_reduce")
    print(f"    run_ranks from a warm process: {forked:.3f} s (best of 3)")
    print(f"    a whole lab with it, zygote start included: {lab_total:.2f} s")
    print(f"    torch.multiprocessing.spawn: {spawned:.2f} s")
    print(
        f"    ratio spawn / run_ranks: {spawned / forked:.1f}x; spawn / whole lab: "
        f"{spawned / lab_total:.1f}x"
    )
    box = sandbox_costs(log)
    print(f"(c) the sandbox ({describe()} here), {LABS} trivial labs once warm")
    print(f"    enforced: {box['enforced_ms']:.1f} ms a lab")
    print(
        f"    detected (a snapshot of {box['files']} files before and after each lab): "
        f"{box['detected_ms']:.1f} ms a lab; one snapshot {box['snapshot_ms']:.1f} ms"
    )
    print(f"    ratio detected / enforced: {box['detected_ms'] / box['enforced_ms']:.2f}x")
    print(
        json.dumps(
            {
                "labs": LABS,
                "runner_zygote_start_s": round(startup, 3),
                "runner_labs_s": round(ours, 3),
                "runner_per_lab_ms": round(per_lab_ms, 1),
                "runner_per_lab_warm_ms": round(per_lab_warm_ms, 1),
                "fresh_process_per_lab_ms": round(per_fresh_ms, 1),
                "ratio_fresh_over_runner": round(baseline / (startup + ours), 2),
                "run_ranks_4_all_reduce_s": round(forked, 3),
                "lab_with_run_ranks_end_to_end_s": round(lab_total, 3),
                "spawn_4_all_reduce_s": round(spawned, 3),
                "ratio_spawn_over_run_ranks": round(spawned / forked, 2),
                "ratio_spawn_over_lab_end_to_end": round(spawned / lab_total, 2),
                "sandbox": describe(),
                "sandbox_enforced_per_lab_ms": round(box["enforced_ms"], 1),
                "sandbox_detected_per_lab_ms": round(box["detected_ms"], 1),
                "sandbox_snapshot_ms": round(box["snapshot_ms"], 1),
                "ratio_detected_over_enforced": round(box["detected_ms"] / box["enforced_ms"], 2),
                "target_per_lab_ms_met": per_lab_ms <= 50,
                "target_end_to_end_s_met": lab_total <= 1.5,
            }
        )
    )


if __name__ == "__main__":
    main()
