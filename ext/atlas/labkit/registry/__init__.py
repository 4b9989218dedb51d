"""The book's registries: model configurations and accelerator figures.

Every lab that needs a model shape or a hardware number reads it from here, and every figure
here names its source (a configuration file at a commit, or a bibliography key with the table
or section it comes from). Nothing else in ``atlas.labkit`` types such a figure.

- :mod:`atlas.labkit.registry.models`: ``MODELS`` and ``model(name)``, one module per family;
  their shape is :mod:`atlas.labkit.registry.schema`. What follows from a shape (parameters,
  FLOPs, KV bytes) is taught code of the models chapter, :mod:`atlas.labkit.models.counting`.
- :mod:`atlas.labkit.registry.hardware`: ``GPUS``, ``gpu(name)``, links and clocks.
- :mod:`atlas.labkit.registry.sm`: what one streaming multiprocessor holds, exp throughput.

The package imports none of its modules: a lab's cache key covers the modules it reaches, and
a lab that reads a GPU's figures should not re-run when a model's figure is fixed.
"""

ROLE = "support"
