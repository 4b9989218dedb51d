"""Checks for the PyTorch chapter: each compares the chapter's code with PyTorch itself.

Views and strides against real tensors; matrix-multiplication copies against the operators
the profiler records; saved bytes against saved-tensor hooks; collectives and DTensor against
real Gloo process groups; the guard model against Dynamo's own compile counter; the kernel
plan against the code Inductor generates; the stream model against a race detector that looks
only at addresses and times.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any, Callable

import torch

from atlas.labkit.pytorch import allocator as alloc_mod
from atlas.labkit.pytorch.layout import Layout, matmul_copies, view

# ---------------------------------------------------------------------------------------------
# tensors and layout
# ---------------------------------------------------------------------------------------------


def layout_of(t: torch.Tensor) -> Layout:
    return Layout(tuple(t.shape), tuple(t.stride()), t.storage_offset())


def same_layout(a: Layout, b: Layout) -> bool:
    """Equal sizes and offset, equal strides wherever a stride matters (size above 1)."""
    if a.sizes != b.sizes or a.offset != b.offset:
        return False
    return all(s1 == s2 for n, s1, s2 in zip(a.sizes, a.strides, b.strides, strict=True) if n > 1)


def addresses_match(layout: Layout, t: torch.Tensor) -> bool:
    """Every element of ``t`` is where ``layout`` says, in a storage numbered 0, 1, 2, ..."""
    base = torch.arange(t.untyped_storage().nbytes() // t.element_size(), dtype=torch.float64)
    probe = base.as_strided(t.shape, t.stride(), t.storage_offset())
    if t.numel() == 0:
        return True
    idx = torch.cartesian_prod(*[torch.arange(n) for n in t.shape]).reshape(-1, t.dim())
    ours = torch.tensor([layout.address(tuple(i.tolist())) for i in idx], dtype=torch.float64)
    return torch.equal(probe.reshape(-1), ours)


def random_view_trials(trials: int, seed: int) -> dict[str, int]:
    """Random chains of slices, transposes and permutations, then a random ``view``.

    Each chain is applied to a real tensor and to a :class:`Layout`; the layouts must agree,
    and :func:`view` must succeed exactly when ``Tensor.view`` does, with the same strides.
    """
    rng = random.Random(seed)
    out = Counter()
    for _ in range(trials):
        shape = tuple(rng.choice([1, 2, 3, 4, 6]) for _ in range(rng.randint(1, 4)))
        t, lay = torch.empty(shape), Layout.contiguous(shape)
        for _ in range(rng.randint(0, 3)):
            op = rng.choice(["permute", "slice", "transpose"])
            if op == "permute" and t.dim() > 1:
                p = list(range(t.dim()))
                rng.shuffle(p)
                t, lay = t.permute(p), lay.permute(tuple(p))
            elif op == "slice":
                d = rng.randrange(t.dim())
                a = rng.randrange(t.shape[d])
                b, step = rng.randint(a + 1, t.shape[d]), rng.choice([1, 2])
                t, lay = t[(slice(None),) * d + (slice(a, b, step),)], lay.slice(d, a, b, step)
            elif op == "transpose" and t.dim() > 1:
                d0, d1 = rng.sample(range(t.dim()), 2)
                t, lay = t.transpose(d0, d1), lay.transpose(d0, d1)
        out["chains"] += 1
        out["chain_layouts_equal"] += same_layout(lay, layout_of(t))
        target, rest = [], t.numel()
        while rest > 1 and len(target) < 4:
            d = rng.choice([x for x in range(1, rest + 1) if rest % x == 0])
            target.append(d)
            rest //= d
        target.append(rest)
        if rng.random() < 0.3:
            target.insert(rng.randrange(len(target) + 1), 1)
        ours = view(lay, tuple(target))
        try:
            theirs = layout_of(t.view(tuple(target)))
        except RuntimeError:
            theirs = None
        out["views_possible"] += theirs is not None
        agree = (ours is None) == (theirs is None) and (ours is None or same_layout(ours, theirs))
        out["view_decisions_equal"] += agree
    return dict(out)


def view_table() -> list[tuple[str, bool, bool]]:
    """For common operations on a contiguous ``4 x 6`` tensor: (operation, shares, is view).

    "Shares" is measured: the result lives in the input's storage. "Is view" is PyTorch's own
    flag, ``Tensor._is_view()``, which autograd uses to track views of a base tensor.
    """
    t = torch.arange(24.0).reshape(4, 6)
    cases: list[tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = [
        ("t[1:3]", lambda t: t[1:3]),
        ("t[:, ::2]", lambda t: t[:, ::2]),
        ("t[2]", lambda t: t[2]),
        ("t.T", lambda t: t.T),
        ("t.view(2, 12)", lambda t: t.view(2, 12)),
        ("t.reshape(2, 12)", lambda t: t.reshape(2, 12)),
        ("t.T.reshape(24)", lambda t: t.T.reshape(24)),
        ("t.unsqueeze(0)", lambda t: t.unsqueeze(0)),
        ("t[:, :1].expand(4, 6)", lambda t: t[:, :1].expand(4, 6)),
        ("t.diagonal()", lambda t: t.diagonal()),
        ("t.unfold(1, 3, 2)", lambda t: t.unfold(1, 3, 2)),
        ("t.chunk(3, dim=1)[0]", lambda t: t.chunk(3, dim=1)[0]),
        ("t.view(torch.int32)", lambda t: t.view(torch.int32)),
        ("t.detach()", lambda t: t.detach()),
        ("t.contiguous()", lambda t: t.contiguous()),
        ("t.T.contiguous()", lambda t: t.T.contiguous()),
        ("t[[0, 2]]", lambda t: t[[0, 2]]),
        ("t[t > 5]", lambda t: t[t > 5]),
        ("t.flip(0)", lambda t: t.flip(0)),
    ]
    rows = []
    for name, fn in cases:
        out = fn(t)
        shares = out.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
        rows.append((name, shares, out._is_view()))
    return rows


def layout_predictions_match() -> dict[str, bool]:
    """The :class:`Layout` of each view operation against the strides PyTorch computes."""
    t = torch.arange(2.0 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    lay = layout_of(t)
    cases = {
        "slice": (t[:, 1:3], lay.slice(1, 1, 3)),
        "slice with step": (t[..., 1::2], lay.slice(3, 1, 5, 2)),
        "select": (t[:, 2], lay.select(1, 2)),
        "transpose": (t.transpose(1, 3), lay.transpose(1, 3)),
        "permute": (t.permute(0, 2, 3, 1), lay.permute((0, 2, 3, 1))),
        "expand": (t[:, :1].expand(2, 3, 4, 5), lay.slice(1, 0, 1).expand((2, 3, 4, 5))),
        "unfold": (t.unfold(3, 2, 1), lay.unfold(3, 2, 1)),
        "diagonal": (t.diagonal(dim1=-2, dim2=-1), lay.diagonal()),
        "view": (t.view(6, 20), view(lay, (6, 20))),
    }
    return {
        name: same_layout(ours, layout_of(real)) and addresses_match(ours, real)
        for name, (real, ours) in cases.items()
    }


def measured_matmul_copies(x: torch.Tensor, w: torch.Tensor) -> int:
    """How many operand copies (``aten::clone``) ``x @ w`` makes, read off the profiler."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        x @ w
    return sum(e.name == "aten::clone" for e in prof.events())


def matmul_cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    """Activations and weights laid out as they are met in practice."""
    torch.manual_seed(0)
    b, s, h, n = 4, 6, 8, 5
    w = torch.randn(h, n)
    wt = torch.randn(n, h).t()  # a weight stored [out, in] and used transposed, as nn.Linear does
    x = torch.randn(b, s, h)
    return [
        ("x[b,s,h] @ W", x, w),
        ("x[b,s,h] @ W (W needs grad)", x, w.clone().requires_grad_()),
        ("x @ weight.t() (nn.Linear layout)", x, wt),
        ("x.transpose(0,1) @ W", x.transpose(0, 1), w),
        ("x.transpose(0,1) @ W (W needs grad)", x.transpose(0, 1), w.clone().requires_grad_()),
        ("x[:, :, ::2] @ W[::2]", x[:, :, ::2], w[::2]),
        ("x[0] @ W", x[0], w),
        ("x[0].t().t() @ W", x[0].t().contiguous().t(), w),
        ("x[0][:, ::2] @ W[::2]", x[0][:, ::2], w[::2]),
        ("x[0] @ W[:, ::2]", x[0], w[:, ::2]),
    ]


def matmul_copy_table() -> list[tuple[str, int, int]]:
    """(case, copies predicted by :func:`matmul_copies`, copies the profiler saw)."""
    rows = []
    for name, x, w in matmul_cases():
        predicted = len(matmul_copies(layout_of(x), layout_of(w), w.requires_grad))
        rows.append((name, predicted, measured_matmul_copies(x, w)))
    return rows


def random_matmul_trials(trials: int, seed: int) -> tuple[int, int]:
    """(agreements, trials) of :func:`matmul_copies` with the profiler on random layouts."""
    rng = random.Random(seed)
    torch.manual_seed(seed)

    def matrix(r: int, c: int) -> torch.Tensor:
        kind = rng.choice(["row", "col", "colstep", "rowstep", "both"])
        if kind == "row":
            return torch.randn(r, c)
        if kind == "col":
            return torch.randn(c, r).t()
        if kind == "colstep":
            return torch.randn(r, 2 * c)[:, ::2]
        if kind == "rowstep":
            return torch.randn(2 * r, c)[::2]
        return torch.randn(2 * r, 2 * c)[::2, ::2]

    agree = 0
    for _ in range(trials):
        k, m, n = rng.choice([3, 5, 8]), rng.choice([2, 4, 7]), rng.choice([3, 6])
        dims = rng.choice([2, 3, 4])
        if dims == 2:
            x = matrix(m, k)
        else:
            shape = [rng.choice([2, 3]) for _ in range(dims - 1)] + [k]
            perm = list(range(dims - 1))
            rng.shuffle(perm)
            inverse = [perm.index(i) for i in range(dims - 1)] + [dims - 1]
            x = torch.randn(*[shape[i] for i in perm], k).permute(inverse)
        w = matrix(k, n).requires_grad_(rng.random() < 0.5)
        predicted = len(matmul_copies(layout_of(x), layout_of(w), w.requires_grad))
        agree += predicted == measured_matmul_copies(x, w)
    return agree, trials


# ---------------------------------------------------------------------------------------------
# autograd
# ---------------------------------------------------------------------------------------------


def executed_nodes(output: torch.Tensor) -> set[str]:
    """Names of the nodes the engine actually runs in ``output.backward()`` (pre-hooks fire)."""
    from atlas.labkit.pytorch.autograd import graph_nodes  # noqa: F401  (same graph)

    ran: set[str] = set()
    handles, stack, seen = [], [output.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        handles.append(node.register_prehook(lambda g, n=node: ran.add(n.name())))
        stack.extend(nxt for nxt, _ in node.next_functions)
    output.backward()
    for h in handles:
        h.remove()
    return ran


def plain_rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm as three lines of tensor code, differentiated by autograd."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def mlp_block(hidden: int, ffn: int, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(hidden, ffn), torch.nn.GELU(), torch.nn.Linear(ffn, hidden)
    )


class SwiGLU(torch.nn.Module):
    """A Llama-style gated MLP: ``down(silu(gate(x)) * up(x))``, no biases."""

    def __init__(self, hidden: int, ffn: int, seed: int = 0) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.gate = torch.nn.Linear(hidden, ffn, bias=False)
        self.up = torch.nn.Linear(hidden, ffn, bias=False)
        self.down = torch.nn.Linear(ffn, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


def measured_saved_bytes(block: torch.nn.Module, x: torch.Tensor, checkpointed: bool) -> int:
    """Activation bytes autograd saves for ``block(x)``, counted by the saved-tensor ledger."""
    from torch.utils.checkpoint import checkpoint

    from atlas.labkit.pytorch.autograd import SavedTensorLedger

    ledger = SavedTensorLedger(block.parameters())
    with ledger:
        block(x) if not checkpointed else checkpoint(block, x, use_reentrant=False)
    return ledger.saved_bytes()


# ---------------------------------------------------------------------------------------------
# torch.distributed (run on Gloo ranks by atlas.labkit.run_ranks)
# ---------------------------------------------------------------------------------------------


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


def dtensor_local_rows(rank: int, world: int, rows: int) -> int:
    """Rows of a ``rows x 4`` tensor that ``Shard(0)`` leaves on this rank of a 1-D CPU mesh."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (world,))
    return distribute_tensor(torch.zeros(rows, 4), mesh, [Shard(0)]).to_local().shape[0]


# ---------------------------------------------------------------------------------------------
# streams and the allocator
# ---------------------------------------------------------------------------------------------


def races(ops: list[Any]) -> list[tuple[str, str]]:
    """Pairs of operations on different streams that touch the same bytes at the same time.

    Looks only at addresses and times: two operations race when their intervals overlap, they
    run on different streams, and one writes a byte range the other reads or writes.
    """
    def overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
        return a[0] < b[0] + b[1] and b[0] < a[0] + a[1]

    found = []
    for i, a in enumerate(ops):
        for b in ops[i + 1 :]:
            if a.stream == b.stream or not (a.start < b.end and b.start < a.end):
                continue
            touched_a = a.reads + a.writes
            touched_b = b.reads + b.writes
            if any(overlap(w, r) for w in a.writes for r in touched_b) or any(
                overlap(w, r) for w in b.writes for r in touched_a
            ):
                found.append((a.name, b.name))
    return found


def allocate_all(sizes: list[int], expandable: bool = False) -> dict[str, int]:
    """Allocate ``sizes`` bytes one after another, all kept alive; the allocator's statistics."""
    from atlas.labkit.pytorch.allocator import CachingAllocator

    mem = CachingAllocator(expandable=expandable)
    for nbytes in sizes:
        mem.malloc(nbytes)
    return mem.stats()


def header_constants() -> dict[str, int]:
    """The allocator's size constants, read from the C++ header the installed wheel ships."""
    from pathlib import Path

    header = Path(torch.__file__).parent / "include" / "c10" / "core" / "AllocatorConfig.h"
    found = re.findall(r"constexpr size_t (k\w+) = (\d+);", header.read_text())
    return {name: int(value) for name, value in found}


def side_stream_reuse(mode: str, nbytes: int = 4 * alloc_mod.MIB) -> dict[str, Any]:
    """A buffer made on the compute stream, read by a send on a side stream, then freed.

    ``mode`` is what the program does before dropping the buffer: ``"nothing"``,
    ``"record_stream"`` (tell the allocator about the side stream) or ``"wait_stream"`` (make
    the compute stream wait for the side stream). The next allocation of the same size on the
    compute stream is then written by a kernel. Returns the races and the memory reserved.
    """
    from atlas.labkit.pytorch.allocator import CachingAllocator
    from atlas.labkit.pytorch.streams import Timeline

    mem, tl = CachingAllocator(), Timeline()
    a = mem.malloc(nbytes, stream=0)
    tl.launch("compute", "produce A", 1.0, writes=((a.address, a.size),))
    tl.wait("comm", tl.record("compute"))
    tl.launch("comm", "send A", 5.0, reads=((a.address, a.size),))
    if mode == "record_stream":
        mem.record_stream(a, stream=1)
    elif mode == "wait_stream":
        tl.wait_stream("compute", "comm")
    mem.free(a)  # Python drops the last reference; the send is still queued
    b = mem.malloc(nbytes, stream=0)
    tl.launch("compute", "produce B", 1.0, writes=((b.address, b.size),))
    return {
        "same_address": a.address == b.address,
        "races": races(tl.ops),
        "reserved_MiB": mem.reserved / alloc_mod.MIB,
        "finish": tl.makespan(),
    }


# ---------------------------------------------------------------------------------------------
# torch.compile
# ---------------------------------------------------------------------------------------------


def inductor_code(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> tuple[torch.Tensor, str]:
    """Compile ``fn`` with Inductor on the CPU; return its output and the generated module."""
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    out, codes = run_and_get_code(torch.compile(fn), *args)
    return out, codes[0]


def generated_kernels(code: str) -> list[str]:
    """Kernel calls in the generated ``call`` function: fused C++ kernels and extern calls."""
    body = code.split("def call(", 1)[1]
    return re.findall(r"\b(cpp_fused_\w+|extern_kernels\.\w+)\(", body)


def kernel_loops(code: str, kernel: str) -> int:
    """``for`` loops in the C++ source of one generated kernel."""
    start = code.index(f"'{kernel}'") if f"'{kernel}'" in code else code.index(kernel)
    source = code[start:].split("''')", 1)[0]
    return len(re.findall(r"\bfor\s*\(", source))


def kernel_body(code: str, kernel: str) -> list[str]:
    """The loop and its statements in one generated C++ kernel, casts and guards removed."""
    start = code.index(f"{kernel} = ")
    source = code[start:].split("''')", 1)[0]
    lines = []
    for line in source.splitlines():
        line = re.sub(r"static_cast<int64_t>\(([^()]*)\)", r"\1", line.strip())
        if line.startswith(("for(", "auto tmp")) or ".store(" in line:
            lines.append(line)
    return lines


def dispatched_ops(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> list[str]:
    from atlas.labkit.pytorch.dispatch import OpLog

    log = OpLog()
    with torch.no_grad(), log:
        fn(*args)
    return log.kernels()


def eager_bytes(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> int:
    """Bytes eager mode reads and writes: every operator reads its inputs, writes its output."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    total = 0

    class Traffic(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            nonlocal total
            out = func(*args, **(kwargs or {}))
            for t in tree_flatten((args, kwargs, out))[0]:
                if isinstance(t, torch.Tensor):
                    total += t.numel() * t.element_size()
            return out

    with torch.no_grad(), Traffic():
        fn(*args)
    return total


def dynamo_compiles(calls: list[tuple[Any, ...]]) -> list[int]:
    """Dynamo's running count of compiled graphs over ``calls`` of ``x * s + 1``."""
    from torch._dynamo.testing import CompileCounter

    torch._dynamo.reset()
    counter = CompileCounter()

    def frame(x: torch.Tensor, s: Any) -> torch.Tensor:
        return x * s + 1

    compiled = torch.compile(frame, backend=counter)
    counts = []
    for args in calls:
        compiled(*args)
        counts.append(counter.frame_count)
    return counts


def explain(fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
    """Dynamo's account of ``fn``: graphs, breaks, and the first line of each reason."""
    torch._dynamo.reset()
    report = torch._dynamo.explain(fn)(*args)
    reasons = [str(b.reason).strip().splitlines()[0] for b in report.break_reasons]
    return {"graphs": report.graph_count, "breaks": report.graph_break_count, "reasons": reasons}
