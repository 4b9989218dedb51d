"""``drift NAME [REV]`` and ``bump NAME REV``: carry every citation of an upstream to a new pin.

For git upstreams and package upstreams alike. For each citation of NAME at the old pin: a
line range whose lines are untouched is renumbered through the diff between the two versions
(git's diff between two commits, renames followed; a line diff between two wheels' files); a
symbol is looked up again by name; a citation whose text changed, or whose file or symbol is
gone, is shown to a human with the diff and left pointing at the old pin (``NAME@OLDSHORT
...``, ``NAME@OLDVERSION ...``). ``drift`` only reports; ``bump`` rewrites the citations in
place (nothing but their text), the pin (the gitlink, or the requirement in pyproject.toml)
and ``upstreams.lock``.

One job per module, in the order a bump runs them:

- :mod:`.target`: the commit to move to (REV resolved, fetched when the store lacks it);
- :mod:`.trees`: where each cited file went between the two commits (renames followed);
- :mod:`.wheels`: for a package, the two versions' files (wheels given or downloaded, the
  installation), each verified against its wheel's RECORD;
- :mod:`.carry`: one citation carried from the old text of its file to the new one, a pure
  function on strings that returns the verdict (a :class:`.model.DriftStatus`);
- :mod:`.suggest`: for a citation left behind, where its code probably is now (windows of the
  new file by similarity, other files of the new tree from :mod:`.others`, a symbol by name),
  offered only when :mod:`.guard` (the citation's own ``:contains:`` and options) passes;
- :mod:`.plan` (git) and :mod:`.package_plan` (packages): every citation of the pin carried,
  as the records of :mod:`.model`;
- :mod:`.bump`: the plan applied, one rule for both kinds (pages, lock entries, then the pin
  of :mod:`.gitlink` or :mod:`.package_pin`);
- :mod:`.cli` (git, and the dispatch) and :mod:`.package_cli`: the command lines;
  :mod:`.report`: the table (or JSON) they print;
- :mod:`.queue`: what is left for a human, written under ``_build/upstream-review/`` by
  ``drift`` and ``bump``; :mod:`.review`: ``review NAME`` walks it (accept, keep with a
  reason, skip);
- the labs that read the upstream, listed by ``drift`` and run at REV with ``--labs``, are
  :mod:`atlas.labs.drift`'s, started as a process (atlas.upstream never imports atlas.labs).

Git runs through the book's git layer (:mod:`atlas.git`: :mod:`atlas.git.diff` for the tree
diff and blob hunks, :mod:`atlas.git.refs` for the refs of a fetched target), like everywhere
else. Line numbers are carried by :mod:`atlas.upstream.linemap`, pages rewritten by
:mod:`atlas.upstream.pagewriter`.
"""

from __future__ import annotations

from atlas.upstream.drift.cli import main
from atlas.upstream.drift.model import SHORT, DriftError, DriftStatus, Plan, Record
from atlas.upstream.drift.report import table

__all__ = ["SHORT", "DriftError", "DriftStatus", "Plan", "Record", "main", "table"]
