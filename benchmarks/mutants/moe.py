"""Mutations of the moe chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "router-bias-sign",
        "moe",
        "moe/router.py",
        "    return bias + rate * torch.sign(load.mean() - load)",
        "    return bias + rate * torch.sign(load - load.mean())",
        ("moe/routing",),
        "the loss-free bias update raises the bias of overloaded experts (sign flipped)",
    ),
    Mutation(
        "capacity-q-over-k",
        "moe",
        "moe/capacity.py",
        "    return sum(expected_overflow(tokens, qi, cap) for qi in q) / (k * tokens)",
        "    return sum(expected_overflow(tokens, qi / k, cap) for qi in q) / (k * tokens)",
        ("moe/problems", "moe/routing"),
        "the closed-form load is drawn with probability q_i / k instead of q_i",
    ),
    Mutation(
        "grouped-gemm-last-row-expert",
        "moe",
        "moe/grouped_gemm.py",
        "tile, g = a[start : start + block_m], int(m_indices[start])",
        "tile, g = a[start : start + block_m], int(m_indices[start + block_m - 1])",
        ("moe/grouped-gemm",),
        "a tile takes the expert id of its last row instead of its first",
    ),
    Mutation(
        "dispatch-counts-per-expert",
        "moe",
        "moe/dispatch.py",
        '        "tokens_per_rank": in_rank.sum(0),',
        '        "tokens_per_rank": torch.bincount(owner.reshape(-1), minlength=topo.ranks),',
        ("moe/deepep",),
        "the dispatch layout counts a token once per expert on a rank, not once per rank",
    ),
    Mutation(
        "eplb-heaviest-expert",
        "moe",
        "moe/eplb.py",
        "        e = max(range(n), key=lambda i: (load[i] / count[i], -i))",
        "        e = max(range(n), key=lambda i: (load[i], -i))",
        ("moe/production",),
        "EPLB replicates the heaviest expert, not the heaviest per copy",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "distinct-ranks-own-rank",
        "moe",
        "moe/granularity.py",
        "    return ranks * (1 - math.comb(num_experts - per_rank, k) / math.comb(num_experts, k))",
        "    return ranks * (1 - math.comb(num_experts - per_rank, k - 1) / math.comb(num_experts, k))",
        ("moe/fine-grained",),
        "the expected ranks a token reaches uses C(E - E/R, k - 1)",
    ),
    Mutation(
        "tiles-contiguous-floor",
        "moe",
        "moe/grouped_gemm.py",
        "        return sum(math.ceil(m / block_m) for m in counts)",
        "        return sum(m // block_m for m in counts)",
        ("moe/grouped-gemm",),
        "the contiguous layout drops each expert's partial tile",
    ),
    Mutation(
        "overflow-from-cap",
        "moe",
        "moe/capacity.py",
        "    return sum((k - cap) * pmf[k] for k in range(cap + 1, n + 1))",
        "    return sum((k - cap) * pmf[k] for k in range(cap + 2, n + 1))",
        ("moe/routing",),
        "the expected overflow skips the first load above capacity",
    ),
    Mutation(
        "granularity-topk-not-scaled",
        "moe",
        "moe/granularity.py",
        "shape.experts * m, shape.topk * m, shape.shared)",
        "shape.experts * m, shape.topk, shape.shared)",
        ("moe/fine-grained",),
        "splitting experts m ways does not multiply top-k by m",
    ),
]
