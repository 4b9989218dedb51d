"""Checks of the labs of ``pytorch/tensors.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import torch

from atlas.labkit.pytorch.layout import Layout, matmul_copies, view

ROLE = "check"


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
