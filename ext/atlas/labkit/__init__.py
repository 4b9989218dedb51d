"""Helpers that labs import: multi-rank runs on gloo, reference implementations.

Sphinx never imports this package; labs do, inside their worker (see atlas.labs). A page's
labs are cached on the labkit files they import (transitively): editing a helper re-runs the
labs of the pages that reach it, and only those.

Two kinds of code live here (see atlas.teach.taught): what a chapter teaches, which its pages
show with ``labcode``, and the harness (``harness`` modules, ``ranks``, ``registry``): checks,
traces, references, units, figures.
"""

from atlas.labkit.ranks import (
    RankCrashed,
    RankError,
    RankSkipped,
    RankTimeout,
    in_sequence,
    run_ranks,
)

ROLE = "support"

__all__ = ["RankCrashed", "RankError", "RankSkipped", "RankTimeout", "in_sequence", "run_ranks"]
