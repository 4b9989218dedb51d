"""The alpha-beta cost of all-reduce algorithms, in closed form and by simulation.

The model: sending a message of ``m`` bytes costs ``alpha + m / beta``, where ``alpha`` is a
fixed latency (software, NIC, switch hops) and ``beta`` the link bandwidth in bytes/s. Each
rank has one send port and one receive port (full duplex); a port carries one message at a
time. The closed forms below count, for each algorithm, the steps on the critical path (each
paying ``alpha``) and the bytes the busiest port carries.

The simulator is the independent side: it knows nothing of these formulas. It takes a
schedule, a list of messages with the messages each depends on, and plays it out over the
ports with an event queue. A schedule generator writes down what each algorithm sends; the
simulator finds when it finishes.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from atlas.labkit.hpc.trees import dtree

ROLE = "taught"


# -- closed forms ----------------------------------------------------------------------------
def ring_time(size: float, n: int, alpha: float, beta: float) -> float:
    """Ring all-reduce: ``2(n-1)`` steps, each moving one ``size/n`` chunk per rank."""
    return 2 * (n - 1) * (alpha + size / (n * beta))


def recursive_doubling_time(size: float, n: int, alpha: float, beta: float) -> float:
    """Recursive doubling: ``log2 n`` steps, each exchanging the whole buffer."""
    return math.log2(n) * (alpha + size / beta)


def halving_doubling_time(size: float, n: int, alpha: float, beta: float) -> float:
    """Rabenseifner: ``2 log2 n`` steps, and a ring's ``2(n-1)/n`` of the buffer per port."""
    return 2 * math.log2(n) * alpha + 2 * (n - 1) / n * size / beta


def binomial_tree_time(size: float, n: int, alpha: float, beta: float) -> float:
    """Binomial-tree reduce then broadcast: ``2 log2 n`` rounds, each moving the whole buffer."""
    return 2 * math.log2(n) * (alpha + size / beta)


def double_tree_port_bytes(size: float) -> float:
    """Bytes through each rank's busiest port in a double binary tree all-reduce: ``2 size``.

    A rank is interior in one tree (two children up, two down, one parent each way) and a
    leaf in the other; each tree carries half the buffer.
    """
    return 2 * size


def crossover(n: int, alpha: float, beta: float, other: str = "tree") -> float:
    """The buffer size below which ``other`` (tree or doubling) beats a ring all-reduce.

    Both log-depth algorithms pay ``alpha`` only ``O(log n)`` times but move the whole
    buffer each round; the ring pays ``alpha`` ``2(n-1)`` times and moves ``size/n`` per step.
    Equating the two times: ``S* = (alpha steps saved) / (extra buffers moved) * alpha beta``.
    """
    lg = math.log2(n)
    if other == "tree":
        steps_saved, extra = 2 * (n - 1) - 2 * lg, 2 * lg - 2 * (n - 1) / n
    elif other == "doubling":
        steps_saved, extra = 2 * (n - 1) - lg, lg - 2 * (n - 1) / n
    else:
        raise ValueError(f"other must be 'tree' or 'doubling', not {other!r}")
    return steps_saved / extra * alpha * beta


# -- schedules -------------------------------------------------------------------------------
@dataclass
class Message:
    src: int
    dst: int
    nbytes: float
    deps: list[int] = field(default_factory=list)  # indices of messages that must arrive first


def ring_schedule(size: float, n: int) -> list[Message]:
    """The ``2(n-1)`` steps of a ring: rank ``i`` sends to ``i+1`` what it received last step."""
    msgs: list[Message] = []
    last = [-1] * n  # index of the message rank i last received
    for _ in range(2 * (n - 1)):
        step = []
        for i in range(n):
            deps = [last[i]] if last[i] >= 0 else []
            step.append(Message(i, (i + 1) % n, size / n, deps))
        for i, m in enumerate(step):
            msgs.append(m)
            last[(i + 1) % n] = len(msgs) - 1
    return msgs


def recursive_doubling_schedule(size: float, n: int) -> list[Message]:
    """``log2 n`` rounds; in round ``k`` rank ``i`` swaps its whole buffer with ``i XOR 2^k``."""
    msgs: list[Message] = []
    last = [-1] * n
    d = 1
    while d < n:
        step = [Message(i, i ^ d, size, [last[i]] if last[i] >= 0 else []) for i in range(n)]
        for m in step:
            msgs.append(m)
            last[m.dst] = len(msgs) - 1
        d <<= 1
    return msgs


def binomial_tree_schedule(size: float, n: int) -> list[Message]:
    """Reduce to rank 0 over a binomial tree, then broadcast back down the same tree.

    In reduce round ``k`` every rank whose lowest set bit is ``2^k`` sends its partial sum to
    the rank ``2^k`` below it; broadcast replays the rounds in reverse. Each round moves the
    whole buffer, and no port carries two messages in a round.
    """
    msgs: list[Message] = []
    got: list[list[int]] = [[] for _ in range(n)]  # messages each rank has received
    rounds = []
    d = 1
    while d < n:
        rounds.append(d)
        d <<= 1
    for d in rounds:  # reduce
        for r in range(n):
            if r & d and not r & (d - 1):  # r's children have all sent: r sends up
                msgs.append(Message(r, r - d, size, list(got[r])))
                got[r - d].append(len(msgs) - 1)
    for d in reversed(rounds):  # broadcast
        for r in range(n):
            if r & d and not r & (d - 1):
                msgs.append(Message(r - d, r, size, list(got[r - d])))
                got[r].append(len(msgs) - 1)
    return msgs


def tree_schedule(size: float, n: int, chunk: float) -> list[Message]:
    """A double binary tree all-reduce: half the buffer per tree, ``chunk`` bytes at a time.

    For each chunk: every rank sends its partial sum to its parent once its children's sums
    have arrived (reduce), then the root's result flows back down (broadcast).
    """
    trees = [[dtree(n, r)[t] for r in range(n)] for t in (0, 1)]
    k = max(1, math.ceil(size / 2 / chunk))
    msgs: list[Message] = []
    for j in range(k):
        nbytes = min(chunk, size / 2 - j * chunk)
        for nodes in trees:
            up: dict[int, int] = {}  # rank -> index of its reduce message

            # The loop's values are bound as defaults: each tree gets its own closures.
            def reduce(r: int, nodes: list = nodes, up: dict = up, nbytes: float = nbytes) -> None:
                kids = [c for c in (nodes[r].down0, nodes[r].down1) if c != -1]
                for c in kids:
                    reduce(c)
                if nodes[r].up != -1:
                    msgs.append(Message(r, nodes[r].up, nbytes, [up[c] for c in kids]))
                    up[r] = len(msgs) - 1

            def broadcast(
                r: int, got: list[int], nodes: list = nodes, nbytes: float = nbytes
            ) -> None:
                for c in (nodes[r].down0, nodes[r].down1):
                    if c != -1:
                        msgs.append(Message(r, c, nbytes, got))
                        broadcast(c, [len(msgs) - 1])

            root = next(r for r in range(n) if nodes[r].up == -1)
            reduce(root)
            kids = [c for c in (nodes[root].down0, nodes[root].down1) if c != -1]
            broadcast(root, [up[c] for c in kids])
    return msgs


# -- the simulator ---------------------------------------------------------------------------
def simulate(msgs: list[Message], alpha: float, beta: float) -> float:
    """Play ``msgs`` over full-duplex ports; return when the last message arrives.

    A message starts when all its dependencies have arrived and both its sender's send port
    and its receiver's receive port are free; it holds both for ``nbytes / beta`` and arrives
    ``alpha`` later. Among startable messages, the one that became ready first goes first.
    """
    waiting = [len(m.deps) for m in msgs]
    dependents: list[list[int]] = [[] for _ in msgs]
    for i, m in enumerate(msgs):
        for d in m.deps:
            dependents[d].append(i)
    ready = [(0.0, i) for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    send_free: dict[int, float] = {}
    recv_free: dict[int, float] = {}
    events: list[tuple[float, int]] = []  # (arrival time, message)
    now, done, finish = 0.0, 0, 0.0
    while done < len(msgs):
        blocked = []
        while ready:
            key = heapq.heappop(ready)
            i = key[1]
            m = msgs[i]
            if send_free.get(m.src, 0.0) <= now and recv_free.get(m.dst, 0.0) <= now:
                end = now + m.nbytes / beta
                send_free[m.src] = recv_free[m.dst] = end
                heapq.heappush(events, (end + alpha, i))
            else:
                blocked.append(key)
        for key in blocked:
            heapq.heappush(ready, key)
        port_times = [t for t in (*send_free.values(), *recv_free.values()) if t > now]
        next_times = [events[0][0]] if events else []
        now = min(port_times + next_times)
        while events and events[0][0] <= now:
            t, i = heapq.heappop(events)
            done += 1
            finish = max(finish, t)
            for j in dependents[i]:
                waiting[j] -= 1
                if waiting[j] == 0:
                    heapq.heappush(ready, (t, j))
    return finish
