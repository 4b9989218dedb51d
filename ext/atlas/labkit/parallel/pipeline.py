"""Pipeline parallelism: schedules, a simulator that times them, and a send/recv executor.

A schedule is, for every stage, the ordered list of operations it performs: the forward
(``F``) or backward (``B``) pass of one microbatch through one of its model chunks. The same
lists drive both :func:`simulate` (which times them under dependencies and reports the bubble)
and :func:`pipeline_matches_sequential` (which executes them on real ranks with point-to-point
sends), so the schedule whose bubble the page computes is the one that is shown to be correct.

Chunks: with ``v`` virtual stages per rank (interleaved 1F1B), rank ``s`` holds model stages
``s, s + p, s + 2p, ...``; chunk ``c`` of rank ``s`` is model stage ``c * p + s``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

ROLE = "taught"

DTYPE = torch.float64
KINDS = ("gpipe", "1f1b", "interleaved")


class Op(NamedTuple):
    """One pass of microbatch ``mb`` through chunk ``chunk`` of a stage: ``F`` or ``B``."""

    kind: str
    mb: int
    chunk: int = 0


def schedule(kind: str, p: int, m: int, v: int = 1) -> list[list[Op]]:
    """Per-stage operation order for ``m`` microbatches on ``p`` stages (``v`` chunks each).

    ``gpipe``: all forwards, then all backwards. ``1f1b``: stage ``s`` runs ``p - s - 1``
    warm-up forwards, then alternates one forward and one backward, then drains. ``interleaved``:
    the same on ``m * v`` chunk-passes, taking microbatches in groups of ``p`` per chunk, with
    Megatron's warm-up of ``2 (p - s - 1) + (v - 1) p``.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown schedule {kind!r}: use one of {', '.join(KINDS)}")
    if kind != "interleaved" and v != 1:
        raise ValueError(f"schedule {kind!r} has one chunk per stage; got v={v}")
    if kind == "interleaved" and m % p:
        raise ValueError(f"interleaved 1F1B needs m divisible by p; got m={m}, p={p}")
    stages = []
    for s in range(p):
        if kind == "gpipe":
            stages.append([Op("F", i) for i in range(m)] + [Op("B", i) for i in range(m)])
            continue
        total = m * v

        def fwd(k: int) -> Op:
            group, pos = divmod(k, p * v)
            return Op("F", group * p + pos % p, pos // p)

        def bwd(k: int) -> Op:
            group, pos = divmod(k, p * v)
            return Op("B", group * p + pos % p, v - 1 - pos // p)

        if kind == "1f1b":
            warm = min(p - s - 1, total)
        else:
            warm = min(2 * (p - s - 1) + (v - 1) * p, total)
        ops = [fwd(k) for k in range(warm)]
        for i in range(total - warm):
            ops += [fwd(warm + i), bwd(i)]
        ops += [bwd(k) for k in range(total - warm, total)]
        stages.append(ops)
    return stages


@dataclass
class Simulation:
    """Timing of a schedule: makespan, bubble fraction, peak in-flight activations per stage."""

    total: float
    bubble: float
    peak_activations: list[float]  # in units of one microbatch through a whole stage
    timeline: list[list[tuple[float, float, Op]]]

    def chart(self, v: int = 1) -> str:
        """One text row per stage, one character per ``1/v`` time unit: a digit is the forward
        of that microbatch, a letter (a=0, b=1, ...) its backward, a dot is idle."""
        width = round(self.total * v)
        rows = []
        for s, ops in enumerate(self.timeline):
            row = ["."] * width
            for start, end, op in ops:
                mark = str(op.mb % 10) if op.kind == "F" else chr(ord("a") + op.mb % 26)
                for t in range(round(start * v), round(end * v)):
                    row[t] = mark
            rows.append(f"stage {s}: " + "".join(row))
        return "\n".join(rows)


def simulate(
    kind: str,
    p: int,
    m: int,
    v: int = 1,
    t_f: float = 1.0,
    t_b: float = 2.0,
    weights: list[float] | None = None,
) -> Simulation:
    """Run the schedule's operations as early as their dependencies allow.

    A chunk's forward costs ``t_f / v`` and its backward ``t_b / v`` (a whole stage costs
    ``t_f`` and ``t_b``), times ``weights[s]`` on stage ``s`` when given (a stage with more
    work); messages are free. ``F`` of model stage ``g`` waits for ``F`` of ``g - 1``; ``B``
    of ``g`` waits for ``B`` of ``g + 1`` (the last stage: for its own ``F``).
    """
    weights = weights or [1.0] * p
    order = schedule(kind, p, m, v)
    last = p * v - 1
    done: dict[tuple[str, int, int], float] = {}  # (kind, model stage, mb) -> end time
    free = [0.0] * p
    nxt = [0] * p
    timeline: list[list[tuple[float, float, Op]]] = [[] for _ in range(p)]
    inflight = [0] * p
    peak = [0] * p
    remaining = sum(len(ops) for ops in order)
    while remaining:
        progressed = False
        for s in range(p):
            if nxt[s] == len(order[s]):
                continue
            op = order[s][nxt[s]]
            g = op.chunk * p + s
            if op.kind == "F":
                dep = ("F", g - 1, op.mb) if g > 0 else None
            else:
                dep = ("B", g + 1, op.mb) if g < last else ("F", g, op.mb)
            if dep is not None and dep not in done:
                continue
            start = max(free[s], done[dep] if dep else 0.0)
            end = start + (t_f if op.kind == "F" else t_b) * weights[s] / v
            done[(op.kind, g, op.mb)] = end
            free[s] = end
            timeline[s].append((start, end, op))
            inflight[s] += 1 if op.kind == "F" else -1
            peak[s] = max(peak[s], inflight[s])
            nxt[s] += 1
            remaining -= 1
            progressed = True
        if not progressed:
            raise RuntimeError(f"schedule {kind!r} deadlocks at p={p}, m={m}, v={v}")
    total = max(free)
    busy = m * (t_f + t_b) * max(weights)  # the busiest stage: every microbatch, every chunk
    return Simulation(total, 1 - busy / total, [n / v for n in peak], timeline)


def bubble_formula(kind: str, p: int, m: int, v: int = 1) -> float:
    """Idle fraction of the makespan: ``(p - 1) / (v m + p - 1)`` (``v = 1`` for GPipe and
    1F1B): bubble time over total time."""
    v = v if kind == "interleaved" else 1
    return (p - 1) / (v * m + p - 1)


def bubble_ratio_formula(kind: str, p: int, m: int, v: int = 1) -> float:
    """The bubble as Narayanan et al. and the Ultra-Scale Playbook define it: bubble time over
    ideal (busy) time, ``(p - 1) / m``, or ``(p - 1) / (v m)`` interleaved."""
    v = v if kind == "interleaved" else 1
    return (p - 1) / (v * m)


def peak_formula(kind: str, p: int, m: int, s: int, v: int = 1) -> float:
    """Microbatches (in units of a whole stage) whose activations stage ``s`` holds at its
    peak: ``m`` for GPipe, ``min(p - s, m)`` for 1F1B; interleaved, one more chunk-pass than
    the warm-up of ``2 (p - s - 1) + (v - 1) p``, divided by ``v``."""
    if kind == "gpipe":
        return float(m)
    if kind == "1f1b":
        return float(min(p - s, m))
    warm = 2 * (p - s - 1) + (v - 1) * p
    return min(warm + 1, m * v) / v


def message_tag(mb: int, dst: int, n_layers: int, backward: bool) -> int:
    """One tag per message, named by its receiving model stage: a rank holding several chunks
    can then never take an activation meant for one of its chunks for another's."""
    return (mb * n_layers + dst) * 2 + int(backward)


def stage_forward(layer: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(layer(x))


def run_pipeline(
    rank: int,
    world_size: int,
    ops: list[Op],
    layers: list[nn.Linear],
    x: torch.Tensor,
    y: torch.Tensor,
) -> tuple[torch.Tensor, int]:
    """Execute this rank's ``ops`` (one row of :func:`schedule`) with sends and receives.

    ``layers`` is the whole model, one layer per model stage; this rank runs the stages
    ``chunk * world_size + rank``. ``x`` and ``y`` are the microbatches ``[m, mb_size,
    hidden]``. Activations go forward and their gradients backward through ``isend``/``recv``
    tagged with the microbatch and the receiving stage. Returns the loss this rank computed
    (non-zero only on the rank holding the last stage) and the most microbatches whose
    activations it held at once (per chunk held, as :func:`simulate` counts them).
    """
    p = world_size
    m, mb_size, hidden = x.shape
    n_layers = len(layers)
    last = n_layers - 1
    saved: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = {}
    sends: list[Any] = []
    loss = torch.zeros((), dtype=DTYPE)
    peak = 0
    for op in ops:
        g = op.chunk * p + rank  # the model stage this op runs
        if op.kind == "F":
            if g == 0:
                inp = x[op.mb].clone()
            else:
                inp = torch.empty(mb_size, hidden, dtype=DTYPE)
                dist.recv(inp, src=(rank - 1) % p, tag=message_tag(op.mb, g, n_layers, False))
            inp.requires_grad_()
            out = stage_forward(layers[g], inp)
            if g == last:
                out = F.mse_loss(out, y[op.mb]) / m
                loss += out.detach()
            else:
                tag = message_tag(op.mb, g + 1, n_layers, False)
                sends.append(dist.isend(out.detach(), dst=(rank + 1) % p, tag=tag))
            saved[(op.mb, op.chunk)] = (inp, out)
            peak = max(peak, len(saved))
        else:
            inp, out = saved.pop((op.mb, op.chunk))
            if g == last:
                out.backward()
            else:
                grad = torch.empty(mb_size, hidden, dtype=DTYPE)
                dist.recv(grad, src=(rank + 1) % p, tag=message_tag(op.mb, g, n_layers, True))
                out.backward(grad)
            if g > 0:
                tag = message_tag(op.mb, g - 1, n_layers, True)
                sends.append(dist.isend(inp.grad, dst=(rank - 1) % p, tag=tag))
    for work in sends:
        work.wait()
    return loss, peak


def makespan_formula(p: int, m: int, stage_times: list[float]) -> float:
    """A pipeline step with stages of unequal cost (``stage_times[s]`` for one microbatch's
    forward and backward on stage ``s``): one traversal of every stage, plus ``m - 1`` more
    microbatches paced by the slowest stage, ``sum(t) + (m - 1) max(t)``."""
    return sum(stage_times) + (m - 1) * max(stage_times)


def p2p_seconds(
    seq: int,
    micro_batch: int,
    hidden: int,
    link_bytes_per_s: float,
    tp: int = 1,
    bytes_per_element: int = 2,
) -> float:
    """Time to send one microbatch's activation to the next stage, ``s b h`` elements; with
    the scatter/gather optimisation each of the ``tp`` ranks sends only its ``1/tp`` of it."""
    return seq * micro_batch * hidden * bytes_per_element / tp / link_bytes_per_s


def stage_flops(
    layers: list[int], hidden: int, layer_params: int, vocab: int, seq: int
) -> list[float]:
    """Forward FLOPs per token of each pipeline stage holding ``layers[s]`` transformer layers:
    2 per layer weight, causal attention's ``4 h (seq + 1) / 2`` per layer on average, and on
    the last stage the output head's ``2 vocab h`` (the embedding lookup does no multiply)."""
    per_layer = 2 * layer_params + 4 * hidden * (seq + 1) / 2
    flops = [n * per_layer for n in layers]
    flops[-1] += 2 * vocab * hidden
    return flops
