"""Taught code of the residual-and-normalisation chapter (source/normalization/).

``norms``: RMSNorm, LayerNorm, a fused residual-add-and-norm and QK-norm in plain torch. ``stacks``:
a deep toy transformer-like stack with Post-LN or Pre-LN placement, a plain residual chain, and a
Hyper-Connections layer with its manifold-constrained mixing. ``atlas.labkit.checks.normalization``:
the loaders that run upstream reference code at the pins, and the labs' checks.
"""

ROLE = "taught"
