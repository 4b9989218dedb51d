"""Mutations of the hpc chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "reduce-scatter-adds-into-sent",
        "hpc",
        "hpc/collectives.py",
        "        chunks[into] += incoming\n",
        "        chunks[out] += incoming\n",
        ("hpc/collectives",),
        "ring reduce-scatter adds the incoming chunk into the chunk it is sending",
    ),
    Mutation(
        "ring-time-no-chunk",
        "hpc",
        "hpc/alphabeta.py",
        "    return 2 * (n - 1) * (alpha + size / (n * beta))",
        "    return 2 * (n - 1) * (alpha + size / beta)",
        ("hpc/collectives",),
        "the ring all-reduce time moves the whole buffer each step, not a 1/n chunk",
    ),
    Mutation(
        "daly-sign",
        "hpc",
        "hpc/failures.py",
        "    return math.sqrt(2 * d * m) * (1 + math.sqrt(x) / 3 + x / 9) - d",
        "    return math.sqrt(2 * d * m) * (1 - math.sqrt(x) / 3 + x / 9) - d",
        ("hpc/failures",),
        "Daly's higher-order correction with the wrong sign on its sqrt term",
    ),
    Mutation(
        "gemm-bytes-no-c",
        "hpc",
        "hpc/roofline.py",
        "    return Cost(2.0 * m * n * k, float(elem_bytes * (m * k + k * n + m * n)))",
        "    return Cost(2.0 * m * n * k, float(elem_bytes * (m * k + k * n)))",
        ("hpc/roofline",),
        "the GEMM's compulsory bytes leave out the output C",
    ),
    Mutation(
        "fanout-counts-sender",
        "hpc",
        "hpc/fabric.py",
        "    return (ranks - 1) * (1 - p_none)",
        "    return ranks * (1 - p_none)",
        ("hpc/scale-out",),
        "the expected MoE fan-out counts the sender's own rank as a remote one",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "young-no-2",
        "hpc",
        "hpc/failures.py",
        "    return math.sqrt(2 * checkpoint_cost * mtbf)",
        "    return math.sqrt(checkpoint_cost * mtbf)",
        ("hpc/failures",),
        "Young's interval forgets the factor 2",
    ),
    Mutation(
        "system-mtbf-times-n",
        "hpc",
        "hpc/failures.py",
        "    return component_mtbf / n",
        "    return component_mtbf / (n - 1)",
        ("hpc/failures",),
        "the system MTBF divides by n - 1 components",
    ),
    Mutation(
        "hier-allreduce-no-ring-factor",
        "hpc",
        "hpc/fabric.py",
        "    return 2 * (nodes - 1) / nodes * size / gpus_per_node",
        "    return (nodes - 1) / nodes * size / gpus_per_node",
        ("hpc/scale-out",),
        "the inter-node ring of a hierarchical all-reduce sends the data once, not twice",
    ),
    Mutation(
        "collision-prob-exponent",
        "hpc",
        "hpc/fabric.py",
        "    return (1 - 1 / uplinks) ** flows",
        "    return (1 - 1 / uplinks) ** (flows - 1)",
        ("hpc/scale-out",),
        "the probability an uplink stays free counts one flow fewer",
    ),
]
