"""Moved to :mod:`atlas.git.store` (object reads) and :mod:`atlas.git.process` (the pipe).

Kept only so that modules not yet moved to the git layer keep importing; new code imports
:mod:`atlas.git.store`.
"""

from atlas.git.process import NO_FETCH
from atlas.git.store import (
    FULL_SHA,
    HEX,
    MAX_SYMLINK_HOPS,
    TAG,
    GitStore,
    GitStoreError,
    MissingObject,
    UnsafePath,
    check_path,
    check_rev,
    close_all,
    store_for,
)

__all__ = [
    "FULL_SHA", "HEX", "MAX_SYMLINK_HOPS", "NO_FETCH", "TAG", "GitStore", "GitStoreError",
    "MissingObject", "UnsafePath", "check_path", "check_rev", "close_all", "store_for",
]  # fmt: skip
