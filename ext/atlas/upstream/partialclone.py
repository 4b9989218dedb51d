"""Bare partial clones of upstreams, and the git transfers into them.

A store is made in a temporary folder and renamed into place, so a run killed while cloning
leaves nothing half-made; git's own packs are atomic, so a later fetch cut short leaves at
worst a commit without its trees, which :func:`missing_commits` notices. Every transfer goes
through :func:`run_fetch`: git's progress relayed to one plain-text bar, a watchdog that gives
up on a silent remote, and one line saying why when it fails. Nothing else in the package
transfers objects (reads never fetch, see :mod:`atlas.git`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from atlas.git import process
from atlas.git.repo import common_dir
from atlas.upstream.registry import Upstream, object_store

STORES_DIR = "atlas-upstreams"
COMMIT_REF = "refs/atlas/commits/"  # keeps every fetched commit reachable (gc never drops it)
# How long a transfer may stall before git gives up (seconds); short with --if-needed.
STALL_S = 20
QUICK_S = 5
SILENT_S = 30  # a fetch silent this long (connecting, say) is given up
PROGRESS = re.compile(
    r"(?P<phase>[A-Z][A-Za-z ]+):\s+(?P<pct>\d+)% \((?P<done>\d+)/(?P<total>\d+)\)"
)


class FetchError(RuntimeError):
    """A transfer failed; the message is one line naming the upstream and the cause."""


# -- the store ----------------------------------------------------------------------------------
def store_dir(book_root: Path, name: str) -> Path:
    common = common_dir(Path(book_root).resolve())
    if common is None:
        raise FetchError(f"{book_root} is not inside a git repository; clone the book with git")
    return common / STORES_DIR / f"{name}.git"


def _env(quick: bool) -> dict[str, str]:
    env = process.git_env(lazy_fetch=False)  # our reads never fetch behind our back
    env["GIT_HTTP_LOW_SPEED_LIMIT"] = "1000"
    env["GIT_HTTP_LOW_SPEED_TIME"] = str(QUICK_S if quick else STALL_S)
    env.setdefault(
        "GIT_SSH_COMMAND", f"ssh -o ConnectTimeout={QUICK_S if quick else 15} -o BatchMode=yes"
    )
    return env


def git(
    git_dir: Path,
    *args: str,
    quick: bool = False,
    stdin: str | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run git on a store (never a pager, never a prompt, never a lazy fetch)."""
    return process.run(*args, git_dir=git_dir, stdin=stdin, env=_env(quick), timeout=timeout)


def pack_bytes(git_dir: Path) -> tuple[int, int]:
    """(bytes, objects) held by a store: its packs plus loose objects."""
    objects = git_dir / "objects"
    size = count = 0
    for pack in (objects / "pack").glob("*.pack"):
        size += pack.stat().st_size
    for idx in (objects / "pack").glob("*.idx"):
        count += _idx_count(idx)
    for sub in objects.glob("[0-9a-f][0-9a-f]"):
        for loose in sub.iterdir():
            size += loose.stat().st_size
            count += 1
    return size, count


def _idx_count(idx: Path) -> int:
    """Object count of a pack index (v2: the last fan-out entry)."""
    with idx.open("rb") as fh:
        head = fh.read(8 + 256 * 4)
    if head[:4] == b"\xfftOc":
        return int.from_bytes(head[8 + 255 * 4 : 8 + 256 * 4], "big")
    return int.from_bytes(head[255 * 4 : 256 * 4], "big")


def _alive(pid: str) -> bool:
    """Whether the process that made a temporary store still runs (then it is not stale)."""
    if not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_store(path: Path) -> bool:
    return (path / "objects").is_dir() and (path / "HEAD").is_file() and (path / "config").is_file()


def create_store(target: Path, url: str) -> Path:
    """A fresh bare partial-clone store, made aside and renamed into place (atomic)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    proc = process.run("init", "--bare", "--quiet", str(tmp))
    if proc.returncode != 0:
        raise FetchError(f"cannot create {tmp}: {proc.stderr.strip()}")
    for key, value in (
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", url),
        ("remote.origin.promisor", "true"),
        ("remote.origin.partialclonefilter", "blob:none"),
        ("gc.auto", "0"),
        ("maintenance.auto", "false"),
        ("fetch.writeCommitGraph", "false"),
    ):
        git(tmp, "config", key, value)
    os.replace(tmp, target)
    return target


def discard_if_empty(git_dir: Path) -> None:
    """Remove a store of ours that holds no object (its first fetch failed): readers would
    take an empty store for one that lacks the commits, where none at all means offline."""
    if git_dir.parent.name == STORES_DIR and pack_bytes(git_dir) == (0, 0):
        shutil.rmtree(git_dir, ignore_errors=True)


def ensure_store(book_root: Path, upstream: Upstream) -> tuple[Path, bool]:
    """(git dir, ours) where the upstream's objects go: an existing store (an initialised
    submodule, say) is used as is; else ours, made or repaired under the common dir."""
    found = object_store(book_root, upstream)
    ours = store_dir(book_root, upstream.name)
    if found is not None and found != ours.resolve():
        return found, False
    for stale in ours.parent.glob(f"{ours.name}.tmp-*"):  # left by an interrupted run
        if not _alive(stale.name.rsplit("-", 1)[-1]):
            shutil.rmtree(stale, ignore_errors=True)
    if ours.exists() and not (
        is_store(ours) and git(ours, "config", "remote.origin.url").stdout.strip()
    ):
        shutil.rmtree(ours, ignore_errors=True)  # half-made by a run older than this code
    if not ours.exists():
        create_store(ours, upstream.url)
    elif git(ours, "config", "remote.origin.url").stdout.strip() != upstream.url:
        git(ours, "config", "remote.origin.url", upstream.url)  # .gitmodules moved the URL
    return ours, True


# -- progress -----------------------------------------------------------------------------------
class Progress:
    """One plain-text progress bar per upstream on stderr (redrawn in place on a terminal)."""

    def __init__(self, name: str, width: int, stream: TextIO | None = None) -> None:
        self.name, self.width = name, width
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = ""

    def show(self, phase: str, done: int, total: int) -> None:
        if not self.tty:
            return
        pct = 100 * done // total if total else 100
        bar = "#" * (pct * 24 // 100)
        line = f"{self.name:<{self.width}} [{bar:<24}] {pct:3d}% {phase} {done}/{total}"
        if line != self._last:
            self.stream.write("\r" + line.ljust(78)[:100])
            self.stream.flush()
            self._last = line

    def done(self, message: str) -> None:
        prefix = "\r" if self.tty and self._last else ""
        self.stream.write(
            f"{prefix}{self.name:<{self.width}} {message}".ljust(78 if self.tty else 0) + "\n"
        )
        self.stream.flush()
        self._last = ""


def run_fetch(
    git_dir: Path,
    args: list[str],
    stdin: str | None,
    phase: str,
    progress: Progress | None,
    quick: bool,
) -> None:
    """``git fetch --progress ARGS``, relaying git's progress to our bar; FetchError on failure."""
    # noop negotiation, as git's own lazy fetch does: advertising the commits we hold would
    # make the server assume we hold their blobs too, and send nothing.
    proc = process.popen(
        "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--progress", "--no-tags", *args,
        git_dir=git_dir,
        env=_env(quick),
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    if stdin is not None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin.encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
    assert proc.stderr is not None
    said: list[str] = []
    last = [time.monotonic()]

    def watchdog() -> None:
        """Kill a fetch that has said nothing for too long (no network, a dead server)."""
        silent = QUICK_S * 2 if quick else SILENT_S
        while proc.poll() is None:
            if time.monotonic() - last[0] > silent:
                said.append(f"fatal: the remote did not answer in {silent} s")
                proc.kill()
                return
            time.sleep(0.1)

    dog = threading.Thread(target=watchdog, daemon=True)
    dog.start()
    buf = b""
    while True:
        chunk = proc.stderr.read1(4096)
        if not chunk:
            break
        last[0] = time.monotonic()
        buf += chunk
        *parts, buf = re.split(rb"[\r\n]", buf)
        for part in parts:
            text = part.decode("utf-8", "replace").strip()
            match = PROGRESS.search(text)
            if match and progress is not None:
                total = int(match["total"])
                progress.show(f"{phase}: {match['phase'].lower()}", int(match["done"]), total)
            elif text and not match:
                said.append(text)
    rc = proc.wait()
    dog.join()
    if rc != 0:
        raise FetchError(_reason(said))


def _reason(said: list[str]) -> str:
    """The line of git's output that says why a fetch failed."""
    for line in reversed(said):
        if line.startswith(("fatal:", "error:")):
            return line.split(":", 1)[1].strip()
    return said[-1] if said else "git fetch failed"


def missing_commits(git_dir: Path, commits: Iterable[str]) -> list[str]:
    """Commits (full SHAs) whose commit object or trees are not all present."""
    out = []
    for commit in sorted(set(commits)):
        proc = git(
            git_dir,
            "rev-list",
            "--objects",
            "--no-walk",
            "--filter=blob:none",
            "--missing=print",
            commit,
            "--",
        )
        if proc.returncode != 0 or any(line.startswith("?") for line in proc.stdout.splitlines()):
            out.append(commit)
    return out


def missing_id(message: str) -> str | None:
    """The object id a MissingObject message names (a symlink's blob, say), or None."""
    match = re.search(r"\b([0-9a-f]{40})\b", message)
    return match.group(1) if match else None


def fetch_blobs(
    git_dir: Path, shas: list[str], progress: Progress | None, quick: bool
) -> list[str]:
    """Fetch blobs by id in one batch; ids the remote refuses are isolated by halving the
    batch and returned (a mirror may lack a large file) instead of failing the rest."""
    if not shas:
        return []
    args = ["--no-write-fetch-head", "--filter=blob:none", "--stdin", "origin"]
    try:
        run_fetch(git_dir, args, "".join(f"{s}\n" for s in shas), "blobs", progress, quick)
        return []
    except FetchError as exc:
        if len(shas) == 1:
            if is_offline(str(exc)):
                raise
            return shas
        if is_offline(str(exc)):
            raise
    half = len(shas) // 2
    return fetch_blobs(git_dir, shas[:half], progress, quick) + fetch_blobs(
        git_dir, shas[half:], progress, quick
    )


def is_offline(reason: str) -> bool:
    """Whether a failure is the network's (retrying smaller batches cannot help)."""
    return bool(
        re.search(
            r"unable to access|could not resolve|connection|timed out|gave up waiting|"
            r"could not read from remote|network|does not appear to be a git repository|"
            r"transport .* not allowed|unable to connect",
            reason,
            re.I,
        )
    )


def fetch_commits(
    git_dir: Path, commits: list[str], refs: Iterable[str], progress: Progress | None, quick: bool
) -> None:
    """Fetch commits (full SHAs) and tags with their trees only, no history, no blobs."""
    specs = [f"{c}:{COMMIT_REF}{c}" for c in commits]
    specs += [f"refs/tags/{t}:refs/tags/{t}" for t in sorted(refs)]
    if specs:
        run_fetch(
            git_dir,
            ["--depth=1", "--filter=blob:none", "origin", *specs],
            None,
            "trees",
            progress,
            quick,
        )


def human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
