"""The lab sandbox, applied in each worker before its first lab: a scratch working directory,
no write outside it, no signal to the processes that run the labs, and no child left behind.

Writes: enforced by Landlock (:mod:`atlas.labs.landlock`) where the kernel has it. A lab may
write only in its scratch folder (its working directory, also ``TMPDIR``, and where the tools'
caches go), in ``/dev/shm`` (torch shares tensors between processes there) and to devices
(``/dev/null``, a GPU's ``/dev/nvidia*``). A denied write raises ``PermissionError`` in the lab,
which fails at that example. Where the kernel has no Landlock (or ``ATLAS_LABS_SANDBOX=detect``
asks for it, as the tests of this path do), the worker detects instead: it snapshots the book's
tree (each file's size and modification time) before and after each lab, and a lab that
changed it fails, naming the files.

Signals: with Landlock ABI 6 a lab cannot signal processes outside its sandbox (the zygote,
Sphinx); without it, the runner blames the lab and restarts the zygote (:mod:`atlas.labs.runner`).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from atlas.labs import landlock

MODE_VARIABLE = "ATLAS_LABS_SANDBOX"  # "detect": snapshot the tree instead of Landlock
# Folders of the book's tree that are not its content: the build writes them, Python writes
# __pycache__, tools write their caches; a snapshot skips them.
SKIPPED = frozenset({"_build", "node_modules", "__pycache__"})
# Where tools that write caches look (inside the scratch folder, so nothing outlives the page).
# Where tools keep caches, moved into the scratch folder. TORCHINDUCTOR_CACHE_DIR: inductor sets
# it to /tmp/torchinductor_USER on first use, and an existing /tmp copy (from any earlier run on
# the machine) would make torch.compile open its lock files there, which the sandbox refuses.
CACHE_VARIABLES = (
    "XDG_CACHE_HOME",
    "MPLCONFIGDIR",
    "TRITON_CACHE_DIR",
    "CUDA_CACHE_PATH",
    "TORCHINDUCTOR_CACHE_DIR",
)
HINT = (
    "a lab may write only in its scratch folder (its working directory and tempfile's); "
    "see CONTRIBUTING.md, Labs"
)


@dataclass(frozen=True)
class Snapshot:
    """Size and modification time of every file of a tree, to tell what a lab changed."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, root: Path) -> Snapshot:
        files: dict[str, tuple[int, int]] = {}
        stack = [str(root)]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") or entry.name in SKIPPED:
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                files[os.path.relpath(entry.path, root)] = (info.st_size, info.st_mtime_ns)
        return cls(files)

    def changes(self, after: Snapshot) -> list[str]:
        """``path (created)``, ``path (modified)``, ``path (deleted)``, sorted by path."""
        words = []
        for path in sorted(self.files.keys() | after.files.keys()):
            before, now = self.files.get(path), after.files.get(path)
            if before == now:
                continue
            what = "created" if before is None else "deleted" if now is None else "modified"
            words.append(f"{path} ({what})")
        return words


@dataclass
class Sandbox:
    """What the worker applied: ``enforced`` (Landlock's ABI, 0: detect only) and, when only
    detecting, the book's tree to snapshot around each lab."""

    scratch: Path
    book_root: Path | None
    enforced: int = 0
    _before: Snapshot | None = None

    def before_lab(self) -> None:
        if not self.enforced and self.book_root is not None and self._before is None:
            self._before = Snapshot.of(self.book_root)

    def after_lab(self) -> str:
        """What the lab wrote outside its scratch folder, in words ("" when nothing).

        One snapshot per lab: the one taken after a lab is the next lab's "before".
        """
        if self._before is None or self.book_root is None:
            return ""
        after = Snapshot.of(self.book_root)
        changed, self._before = self._before.changes(after), after
        if not changed:
            return ""
        more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        shown = ", ".join(changed[:5]) + more
        return f"it wrote outside its scratch folder, into the book's tree: {shown}; {HINT}"


def describe() -> str:
    """What the workers of this machine get: ``landlock ABI 7``, or ``detect``."""
    abi = 0 if os.environ.get(MODE_VARIABLE, "") == "detect" else landlock.abi_version()
    return f"landlock ABI {abi}" if abi else "detect"


def enter(scratch: Path, book_root: Path | None) -> Sandbox:
    """Make ``scratch`` this worker's working directory and temporary folder, then forbid every
    write outside it (Landlock), or prepare to detect them where that is not possible."""
    scratch.mkdir(parents=True, exist_ok=True)
    os.chdir(scratch)
    os.environ["TMPDIR"] = str(scratch)
    tempfile.tempdir = str(scratch)  # the zygote may have cached the machine's /tmp already
    for variable in CACHE_VARIABLES:
        os.environ[variable] = str(scratch / ".cache" / variable.lower())
    sandbox = Sandbox(scratch, book_root)
    if os.environ.get(MODE_VARIABLE, "") == "detect":
        return sandbox
    rights = landlock.write_rights(landlock.abi_version())
    writable = {scratch: rights, Path("/dev/shm"): rights, Path("/dev"): landlock.FILE_WRITES}
    try:
        sandbox.enforced = landlock.restrict(writable)
    except OSError:
        sandbox.enforced = 0  # no Landlock here: detect instead
    return sandbox


def denied_write(exc: BaseException, scratch: Path) -> bool:
    """Whether ``exc`` is the sandbox refusing a write (a PermissionError outside ``scratch``)."""
    if not isinstance(exc, PermissionError):
        return False
    name = exc.filename or ""
    try:
        return not Path(os.path.abspath(str(name))).is_relative_to(scratch)
    except (TypeError, ValueError):
        return True
