"""Everything the book asks of git, in one place.

- :mod:`atlas.git.process` is the only module that starts git: the environment (never a
  prompt or a pager; reads forbid every transport; lazy fetches off), one-shot commands
  (:func:`~atlas.git.process.run`), driven processes (:func:`~atlas.git.process.popen`, for
  ``fetch``'s progress) and the persistent ``cat-file`` pipe;
- :mod:`atlas.git.store` reads objects from an object store through that pipe
  (:class:`~atlas.git.store.GitStore`: commits, trees, symlinks inside the tree, blobs) and
  refuses names that could act as options or leave the tree;
- :mod:`atlas.git.revs` turns a short SHA or a tag into a full SHA, one rule for every caller;
- :mod:`atlas.git.repo` asks the book's repository for its registry (``.gitmodules``, the
  gitlinks), its common dir, its past pins, and moves a gitlink.
- :mod:`atlas.git.diff` diffs two commits' trees and two blobs (``drift``/``bump``);
- :mod:`atlas.git.refs` reads and moves the refs of an upstream's store (``rev-parse``,
  ``update-ref``).

Why not GitPython (pinned until this package existed, never imported): it is no faster.
``benchmarks/upstream.py`` (its ``blob reads`` lines, best of several runs) measured 0.065 ms
per blob read through :class:`~atlas.git.store.GitStore` against 0.064 ms through GitPython's
``Repo.git.get_object_data`` and 0.065 ms through ``Repo.odb.stream``: both keep one persistent
``cat-file`` process, and the pipe is the cost. GitPython would let git fetch (a partial clone
offline then hangs or dies instead of answering "missing"), starts git with the user's
environment (prompts, pagers), and adds a dependency for the trees and symlinks we parse
ourselves in a few lines.
"""
