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
]
