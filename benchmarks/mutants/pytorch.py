"""Mutations of the pytorch chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "slice-offset-no-stride",
        "pytorch",
        "pytorch/layout.py",
        "        return Layout(tuple(sizes), tuple(strides), self.offset + start * self.strides[dim])",
        "        return Layout(tuple(sizes), tuple(strides), self.offset + start)",
        ("pytorch/tensors",),
        "a slice moves the offset by start elements, not start strides",
    ),
    Mutation(
        "rmsnorm-backward-no-mean",
        "pytorch",
        "pytorch/autograd.py",
        "        grad_x = rstd * (gw - x_hat * (gw * x_hat).mean(-1, keepdim=True))",
        "        grad_x = rstd * gw",
        ("pytorch/autograd",),
        "RMSNorm's hand-written backward drops its mean term",
    ),
    Mutation(
        "allocator-first-fit",
        "pytorch",
        "pytorch/allocator.py",
        "        return min(fits, key=lambda b: (b.size, b.address), default=None)",
        "        return min(fits, key=lambda b: b.address, default=None)",
        ("pytorch/allocator",),
        "the caching allocator takes the first free block that fits, not the smallest",
    ),
    Mutation(
        "reduce-scatter-no-sum",
        "pytorch",
        "pytorch/dist.py",
        "    return list(torch.stack(inputs).sum(0).chunk(len(inputs)))",
        "    return [x.chunk(len(inputs))[r] for r, x in enumerate(inputs)]",
        ("pytorch/distributed",),
        "the reference reduce-scatter hands each rank its own slice, unsummed",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "alloc-round-floor",
        "pytorch",
        "pytorch/allocator.py",
        "    return max(MIN_BLOCK, -(-nbytes // MIN_BLOCK) * MIN_BLOCK)",
        "    return max(MIN_BLOCK, nbytes // MIN_BLOCK * MIN_BLOCK)",
        ("pytorch/allocator",),
        "the caching allocator rounds request sizes down instead of up to 512 bytes",
    ),
    Mutation(
        "alloc-large-round-floor",
        "pytorch",
        "pytorch/allocator.py",
        "    return -(-size // ROUND_LARGE) * ROUND_LARGE",
        "    return size // ROUND_LARGE * ROUND_LARGE",
        ("pytorch/allocator",),
        "large segments are rounded down to 2 MiB instead of up",
    ),
    Mutation(
        "rope-rotates-backwards",
        "pytorch",
        "pytorch/dispatch.py",
        "torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)",
        "torch.cat((x1 * cos + x2 * sin, x2 * cos - x1 * sin), dim=-1)",
        ("pytorch/index",),
        "the rotary embedding rotates by -theta",
    ),
    Mutation(
        "rmsnorm-fn-no-weight",
        "pytorch",
        "pytorch/autograd.py",
        "        return x * rstd * weight",
        "        return x * rstd",
        ("pytorch/autograd",),
        "the hand-written RMSNorm forward drops its gain",
    ),
    # --- the allocator page's backends and pools (issue 38) ---
    Mutation(
        "allocconf-backend-shared",
        "pytorch",
        "pytorch/allocconf.py",
        '        "backend",\n',
        "",
        ("pytorch/allocator",),
        "backend is taken for a key of the shared parser, not of CUDA's",
    ),
    Mutation(
        "allocconf-split-inside-brackets",
        "pytorch",
        "pytorch/allocconf.py",
        '        elif ch == "," and depth == 0:',
        '        elif ch == ",":',
        ("pytorch/allocator",),
        "the settings string is cut at the commas inside a bracketed list too",
    ),
]
