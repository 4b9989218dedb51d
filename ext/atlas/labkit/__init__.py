"""Helpers that labs import: multi-rank runs on gloo, reference implementations.

Sphinx never imports this package; labs do, inside their worker (see atlas.labs). Everything
under ``ext/atlas/labkit`` is part of the labs' cache key: editing a helper re-runs the labs.
"""

from atlas.labkit.ranks import RankCrashed, RankError, RankTimeout, run_ranks

__all__ = ["RankCrashed", "RankError", "RankTimeout", "run_ranks"]
