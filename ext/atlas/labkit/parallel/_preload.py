"""Imports that the first backward pass of a process would otherwise make in every rank.

The first ``Tensor.backward(gradient)`` of a process imports ``symbolic_shapes`` and sympy with
it (0.5 s; several seconds when four ranks do it at once on two cores). The modules whose rank
functions run backward import this one, so that the process that forks the ranks pays once and
the ranks inherit the modules.
"""

import torch.fx.experimental.symbolic_shapes  # noqa: F401
