"""The compile cache: a folder per key (a digest of the source, the flags and the tools' versions).

nvcc takes about two seconds per file and architecture, so a result is kept under
``_build/.cuda-cache/<key>/`` and reused by every later build, test and runnable lab script.
Inside the lab sandbox the build folder is read-only (a lab may write only in its scratch folder),
so there the cache falls back to the scratch folder and lives as long as the page's run: the
lab cache, which keys a page on its kernel files, is what spares an unchanged page the compile.
``ATLAS_CUDA_CACHE`` names another folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

ROLE = "support"

VARIABLE = "ATLAS_CUDA_CACHE"
BOOK_ROOT = Path(__file__).resolve().parents[4]  # ext/atlas/labkit/cuda/store.py


def digest(parts: Iterable[str | bytes]) -> str:
    """A key for the cache from everything that decides the output."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder):
            return True
    except OSError:  # PermissionError from the lab sandbox, a read-only tree
        return False


def cache_folder() -> Path:
    """``$ATLAS_CUDA_CACHE``, else ``<book>/_build/.cuda-cache``, whichever is writable first,
    else a folder in the temporary directory (in the lab sandbox: the page's scratch folder)."""
    named = os.environ.get(VARIABLE)
    for folder in ([Path(named)] if named else []) + [BOOK_ROOT / "_build" / ".cuda-cache"]:
        if _writable(folder):
            return folder
    return Path(tempfile.gettempdir()) / "atlas-cuda-cache"


def cached(key: str, produce: Callable[[Path], None]) -> tuple[Path, bool]:
    """The folder of ``key``, made by ``produce(folder)`` on a miss; and whether it was a hit.

    ``produce`` writes into a fresh temporary folder that is renamed into place only when it
    returns, so a failed or interrupted compile never leaves a half-written entry.
    """
    root = cache_folder()
    final = root / key
    if (final / "done").exists():
        return final, True
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
    try:
        produce(work)
        (work / "done").write_text("", encoding="utf-8")
        try:
            os.replace(work, final)
        except OSError:  # another process put the same entry in place first
            shutil.rmtree(work, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return final, False
