"""The training chapter's lab code: one Megatron-LM iteration, taught in plain PyTorch.

Taught modules (each shown on its page with ``labcode``):

- :mod:`.loop`: the training step with microbatches and gradient accumulation;
- :mod:`.flops`: the FLOPs of an iteration and model FLOPs utilisation (MFU);
- :mod:`.mixed`: the dynamic loss scaler, the mixed-precision optimizer with fp32 main
  parameters and gradients, global-norm clipping, the distributed optimizer's shard ranges;
- :mod:`.recompute`: a GPT layer whose saved activations follow Korthikanti et al., with
  selective and full recomputation and activation offload;
- :mod:`.ckpt`: a sharded checkpoint that reshards on load, and a resumable training state;
- :mod:`.data`: the ``.bin``/``.idx`` indexed dataset, blending, sample and shuffle indices,
  the resumable sampler;
- :mod:`.memory`: the per-GPU memory model of a configuration, and the configuration search;
- :mod:`.stability`: the loss-spike test, the rerun state machine, the straggler report.

:mod:`atlas.labkit.checks.training` holds what checks them: Megatron-LM's own functions at the
pin, byte counters.
"""

ROLE = "taught"
