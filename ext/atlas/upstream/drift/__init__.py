"""``drift NAME [REV]`` and ``bump NAME REV``: carry every citation of an upstream to a new pin.

For each citation of NAME at the old pin: a line range whose lines are untouched is renumbered
through git's diff between the two commits (renames followed); a symbol is looked up again by
name; a citation whose text changed, or whose file or symbol is gone, is shown to a human with
the diff and left pointing at the old commit (``NAME@OLDSHORT ...``), so the book still builds.
``drift`` only reports; ``bump`` rewrites the citations in place (nothing but their text), the
gitlink and ``upstreams.lock``.

One job per module, in the order a bump runs them:

- :mod:`.target`: the commit to move to (REV resolved, fetched when the store lacks it);
- :mod:`.trees`: the tree diff between the two commits, and where each cited file went;
- :mod:`.carry`: one citation carried from the old text of its file to the new one, a pure
  function on strings that returns the verdict (unchanged, moved, changed, gone);
- :mod:`.plan`: every citation of the pin carried, as the records of :mod:`.model`;
- :mod:`.bump`: the plan applied (pages, lock entries, gitlink);
- :mod:`.cli`: the command line and the table it prints.

Git runs through the book's git layer (:mod:`atlas.git`), like everywhere else.

Line numbers are carried by :mod:`atlas.upstream.linemap`, pages rewritten by
:mod:`atlas.upstream.pagewriter`; :mod:`atlas.upstream.package_drift` does the same for
package upstreams (two wheels instead of two commits).
"""

from __future__ import annotations

from atlas.upstream.drift.cli import main, table
from atlas.upstream.drift.model import SHORT, DriftError, Plan, Record

__all__ = ["SHORT", "DriftError", "Plan", "Record", "main", "table"]
