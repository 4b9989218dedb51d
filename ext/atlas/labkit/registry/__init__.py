"""The book's two registries: model configurations and accelerator figures.

Every lab that needs a model shape or a hardware number reads it from here, and every figure
here names its source (a configuration file at a commit, or a bibliography key with the table
or section it comes from). Nothing else in ``atlas.labkit`` types such a figure.

- :mod:`atlas.labkit.registry.models`: ``MODELS`` and ``model(name)``, one module per family;
  their shape is :mod:`atlas.labkit.registry.schema`. What follows from a shape (parameters,
  FLOPs, KV bytes) is taught code of the models chapter, :mod:`atlas.labkit.models.counting`.
- :mod:`atlas.labkit.registry.hardware`: ``GPUS``, ``gpu(name)``.
"""

from atlas.labkit.registry.hardware import GPUS, gpu
from atlas.labkit.registry.models import MODELS, model

ROLE = "support"

__all__ = [
    "GPUS",
    "MODELS",
    "gpu",
    "model",
]
