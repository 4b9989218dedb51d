"""Mutations of the post-training chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "grpo-std-population",
        "post-training",
        "post_training/pg.py",
        'correction=1 if std == "unbiased" else 0)',
        "correction=0)",
        ("post-training/policy-gradient",),
        "GRPO's group std always divides by G, whatever the option",
    ),
    Mutation(
        "sft-positions-not-restarted",
        "post-training",
        "post_training/sft.py",
        "    positions = torch.cat([torch.arange(len(s)) for s in seqs])",
        "    positions = torch.arange(sum(len(s) for s in seqs))",
        ("post-training/sft",),
        "packing does not restart positions at each sequence",
    ),
    Mutation(
        "qkv-split-ungrouped",
        "post-training",
        "post_training/weights.py",
        "        per_group = full.view(s.groups, s.heads // s.groups + 2, s.head_dim, s.hidden)\n"
        "        q, k, v = per_group.split([s.heads // s.groups, 1, 1], dim=1)\n",
        "        q, k, v = full.split([s.heads * s.head_dim, s.groups * s.head_dim,"
        " s.groups * s.head_dim], dim=0)\n",
        ("post-training/weight-sync",),
        "Megatron's fused QKV is split as three contiguous blocks, as if it were not grouped",
    ),
    Mutation(
        "tis-ratio-inverted",
        "post-training",
        "post_training/mismatch.py",
        "    return torch.exp(train_logp - rollout_logp).clamp(clip_low, clip).detach()",
        "    return torch.exp(rollout_logp - train_logp).clamp(clip_low, clip).detach()",
        ("post-training/mismatch",),
        "truncated importance sampling uses the inverted ratio rollout / train",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "ppo-max-not-min",
        "post-training",
        "post_training/pg.py",
        "    return -torch.minimum(ratio * advantages, clipped * advantages)",
        "    return -torch.maximum(ratio * advantages, clipped * advantages)",
        ("post-training/policy-gradient",),
        "the clipped surrogate takes the optimistic side (max instead of min)",
    ),
    Mutation(
        "grpo-no-std",
        "post-training",
        "post_training/pg.py",
        "    return (centred / (s + eps)).flatten()",
        "    return centred.flatten()",
        ("post-training/policy-gradient",),
        "group advantages are centred but not divided by the group's standard deviation",
    ),
    Mutation(
        "k3-sign",
        "post-training",
        "post_training/pg.py",
        "        return torch.exp(x) - 1 - x",
        "        return torch.exp(x) - 1 + x",
        ("post-training/policy-gradient",),
        "the k3 KL estimator adds x instead of subtracting it (no longer non-negative)",
    ),
    Mutation(
        "gae-next-value-off-by-one",
        "post-training",
        "post_training/pg.py",
        "values[..., t + 1] if t + 1 < T",
        "values[..., t] if t + 1 < T",
        ("post-training/policy-gradient",),
        "GAE bootstraps from the current value instead of the next one",
    ),
]
