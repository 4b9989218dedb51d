"""Helpers that labs import: multi-rank runs on gloo, reference implementations.

Sphinx never imports this package; labs do, inside their worker (see atlas.labs). A page's
labs are cached on the labkit files they import (transitively): editing a helper re-runs the
labs of the pages that reach it, and only those.

Every module declares its role (``ROLE``, read by atlas.teach.taught): ``taught`` (what a
chapter teaches, in ``<chapter>/``, which its pages show with ``labcode``), ``check`` (what the
labs check it with: ``checks/<chapter>/<page>.py``, and :mod:`atlas.labkit.pinned`, the one
loader of upstream code at the pins) or ``support`` (``ranks``, ``units``, ``registry``).
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
