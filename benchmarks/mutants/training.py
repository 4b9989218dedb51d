"""Mutations of the training chapter's labkit (see benchmarks/mutants/__init__.py)."""
# ruff: noqa: E501 - the texts to replace are exact lines of labkit

from mutants.base import Mutation

MUTATIONS: list[Mutation] = [
    Mutation(
        "loss-not-divided-by-microbatches",
        "training",
        "training/loop.py",
        "        scale_loss(loss / n).backward()",
        "        scale_loss(loss).backward()",
        ("training/index",),
        "each microbatch's loss is not divided by the number of microbatches",
    ),
    Mutation(
        "hysteresis-refilled-on-backoff",
        "training",
        "training/mixed.py",
        "                self.scale = max(self.scale * self.backoff_factor, self.min_scale)\n",
        "                self.scale = max(self.scale * self.backoff_factor, self.min_scale)\n"
        "                self.hysteresis_tracker = self.hysteresis\n",
        ("training/mixed-precision",),
        "the loss scaler refills its hysteresis budget on every backoff",
    ),
    Mutation(
        "ckpt-rng-not-restored",
        "training",
        "training/ckpt.py",
        '    torch.set_rng_state(state["rng"]["torch"])\n',
        "",
        ("training/checkpoints",),
        "resume does not restore torch's random state",
    ),
    Mutation(
        "samples-no-overlap",
        "training",
        "training/data.py",
        "        remaining = seq_length  # advance",
        "        remaining = seq_length + 1  # advance",
        ("training/data",),
        "samples are cut without the one-token overlap (a target token is lost per sample)",
    ),
    Mutation(
        "memory-ignores-distributed-optimizer",
        "training",
        "training/memory.py",
        "bytes_per_param(param_bytes, grad_bytes, lay.dp, lay.distributed_optimizer)",
        "bytes_per_param(param_bytes, grad_bytes, lay.dp)",
        ("training/memory",),
        "the memory ledger ignores the distributed optimizer (optimizer state never sharded)",
    ),
    # --- written from the taught code, before reading the labs (issue 35) ---
    Mutation(
        "six-n-keeps-lookup",
        "training",
        "training/flops.py",
        "    return 6.0 * (params_active(m) - lookup) * tokens",
        "    return 6.0 * params_active(m) * tokens",
        ("training/index",),
        "6N counts the embedding lookup table as matmul parameters",
    ),
    Mutation(
        "mfu-chips-dropped",
        "training",
        "training/flops.py",
        "    return flops_per_token * tokens_per_second / (chips * peak_flops)",
        "    return flops_per_token * tokens_per_second / peak_flops",
        ("training/memory",),
        "MFU divides by one chip's peak, not all of them",
    ),
    Mutation(
        "microbatches-ignore-dp",
        "training",
        "training/memory.py",
        "    n_micro = global_batch // (micro_batch * lay.dp)\n    state = ",
        "    n_micro = global_batch // micro_batch\n    state = ",
        ("training/memory",),
        "the number of microbatches per rank ignores data parallelism",
    ),
    Mutation(
        "sp-activation-not-split",
        "training",
        "training/memory.py",
        "        return 2 * sbh / (tp if sp else 1)",
        "        return 2 * sbh",
        ("training/activations",),
        "sequence parallelism does not shard the norms' inputs",
    ),
]
