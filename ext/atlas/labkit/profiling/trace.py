"""Reading a profiler trace: the schedule that decides which steps are recorded, and the
operator table (calls, total and self time) computed from the raw events of a Chrome trace.

A Chrome trace holds complete events (``"ph": "X"``) with a start ``ts`` and a duration
``dur`` in microseconds, one timeline per thread. An operator's *total* time is its duration;
its *self* time is the duration minus the time covered by its direct children, the operators
it called. Events on one thread nest properly, so one stack per thread finds each event's
parent.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

ROLE = "taught"


def schedule_action(
    step: int, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0
) -> str:
    """What the profiler does at ``step``: "none", "warmup", "record" or "save".

    The first ``skip_first`` steps are skipped; then cycles of ``wait`` idle steps, ``warmup``
    steps that trace but discard, and ``active`` recorded steps, the last of which hands the
    trace over ("save"). ``repeat`` cycles (0: without end).
    """
    if step < skip_first:
        return "none"
    step -= skip_first
    cycle = wait + warmup + active
    if repeat > 0 and step >= repeat * cycle:
        return "none"
    pos = step % cycle
    if pos < wait:
        return "none"
    if pos < wait + warmup:
        return "warmup"
    return "save" if pos == cycle - 1 else "record"


@dataclass
class Event:
    name: str
    tid: int
    start: float  # microseconds
    dur: float
    children: list[Event] = field(default_factory=list)

    @property
    def end(self) -> float:
        return self.start + self.dur

    @property
    def self_time(self) -> float:
        return self.dur - sum(c.dur for c in self.children)


def operator_events(trace: dict, categories: tuple[str, ...] = ("cpu_op",)) -> list[Event]:
    """The complete events of the given categories, nested into trees per thread."""
    raw = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") in categories]
    events = [Event(e["name"], e["tid"], float(e["ts"]), float(e["dur"])) for e in raw]
    by_thread: dict[int, list[Event]] = defaultdict(list)
    for ev in events:
        by_thread[ev.tid].append(ev)
    for evs in by_thread.values():
        # Parents first: earlier start, and on a tie the longer event.
        evs.sort(key=lambda e: (e.start, -e.dur))
        stack: list[Event] = []
        for ev in evs:
            while stack and stack[-1].end <= ev.start:
                stack.pop()
            if stack:
                stack[-1].children.append(ev)
            stack.append(ev)
    return fold_same_name(events)


def fold_same_name(events: list[Event]) -> list[Event]:
    """Fold an event into its parent when the parent has the same name and no other child
    (``aten::sum`` calling the ``aten::sum`` of another overload is one operator to a reader)."""
    folded: set[int] = set()
    for ev in events:
        while len(ev.children) == 1 and ev.children[0].name == ev.name:
            only = ev.children[0]
            folded.add(id(only))
            ev.children = only.children
    return [ev for ev in events if id(ev) not in folded]


def operator_table(events: list[Event]) -> dict[str, tuple[int, float, float]]:
    """``name -> (calls, total microseconds, self microseconds)``, summed over calls."""
    table: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for ev in events:
        row = table[ev.name]
        row[0] += 1
        row[1] += ev.dur
        row[2] += ev.self_time
    return {k: (int(v[0]), v[1], v[2]) for k, v in table.items()}
