"""The book's two registries: model configurations and accelerator figures.

Every lab that needs a model shape or a hardware number reads it from here, and every figure
here names its source (a configuration file at a commit, or a bibliography key with the table
or section it comes from). Nothing else in ``atlas.labkit`` types such a figure.

- :mod:`atlas.labkit.registry.models`: ``MODELS``, ``model(name)``, and the counting functions
  ``params_total``, ``params_active``, ``flops_per_token``, ``kv_bytes_per_token``, ``kv_bytes``.
- :mod:`atlas.labkit.registry.hardware`: ``GPUS``, ``gpu(name)``.
"""

from atlas.labkit.registry.hardware import GPUS, gpu
from atlas.labkit.registry.models import (
    MODELS,
    flops_per_token,
    kv_bytes,
    kv_bytes_per_token,
    model,
    params_active,
    params_total,
)

ROLE = "support"

__all__ = [
    "GPUS",
    "MODELS",
    "flops_per_token",
    "gpu",
    "kv_bytes",
    "kv_bytes_per_token",
    "model",
    "params_active",
    "params_total",
]
