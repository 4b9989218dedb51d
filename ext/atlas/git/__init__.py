"""Everything the book asks of git, in one place, on GitPython.

- :mod:`atlas.git.process` holds the rules every git process starts under (never a prompt or
  a pager; lazy fetches off and every transport forbidden for reads) and opens GitPython's
  ``Repo`` and ``Git`` under them (``Git.update_environment``); transfers alone start git
  themselves (:func:`~atlas.git.process.run`, :func:`~atlas.git.process.popen`, for
  ``fetch``'s progress and stall watchdog);
- :mod:`atlas.git.store` reads objects from an object store through GitPython's persistent
  ``cat-file`` (``Repo.odb``, ``Git.get_object_data``: commits, trees, symlinks inside the
  tree, blobs) and refuses names that could act as options or leave the tree;
- :mod:`atlas.git.revs` turns a short SHA or a tag into a full SHA, one rule for every caller;
- :mod:`atlas.git.repo` asks the book's repository for its registry (``.gitmodules``, the
  gitlinks), its common dir, its past pins, and moves a gitlink;
- :mod:`atlas.git.diff` diffs two commits' trees and two blobs (``drift``/``bump``);
- :mod:`atlas.git.refs` reads and moves the refs of an upstream's store (``Repo.rev_parse``,
  ``Reference.create``/``delete``).

GitPython costs nothing in speed: :class:`~atlas.git.store.GitStore` is GitPython's reader plus
a lock and the checks, and ``benchmarks/upstream.py`` (its ``blob reads`` lines) measures it
against GitPython's bare ``Git.get_object_data`` and ``Repo.odb.stream`` in the same run: the
same cost within the noise, since one persistent ``cat-file`` serves each and the pipe is the
cost (the hand-written pipe this replaced read at 0.065 ms a blob against GitPython's 0.064 and
0.065 ms).

What GitPython does not do for us is hand-written, each with its reason where it lives: the
rules themselves (GitPython starts git with the user's environment), telling git's "missing"
from "ambiguous" from "died" and emptying the stderr GitPython never reads (``store``), symlinks
inside the tree (``store``), the raw diff's parser (GitPython's ``DiffIndex`` silently loses
every change when one file name is not UTF-8: ``diff``), and the book queries whose GitPython
models are less faithful than git (``GitConfigParser`` accepts ``.gitmodules`` files git
refuses; ``IndexFile`` cannot read index version 4: ``repo``), and the commands of transfers
(``process.run``/``popen``: a stall watchdog on git's progress, which GitPython's fetch lacks).
"""

import os

# Set before any module of the package imports GitPython: without git on PATH, GitPython's
# import fails (it checks git then); quiet, the first git command fails instead, and the caller
# says "cannot start git" where it matters (a build without git still reports, page by page).
os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
