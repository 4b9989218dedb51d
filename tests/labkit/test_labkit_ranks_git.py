"""A rank that read git objects leaves no ``git cat-file`` behind: the lab sandbox (a child
subreaper) would count it as the lab's leftover process and fail the lab. The parent kills the
ranks as soon as it has their results, so the rank stops its git before sending its result."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch.distributed")

SCRIPT = r"""
import ctypes, os, sys
from pathlib import Path
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER, as the lab worker is
from atlas.labkit import run_ranks

def read(rank, world, git_dir, commit, note):
    from atlas.git.store import store_for
    store = store_for(Path(git_dir))
    blob = store.read_blob(commit, "a.txt")
    pids = [cmd.proc.pid for cmd in store._persistent() if getattr(cmd, "proc", None)]
    Path(f"{note}-{rank}").write_text(" ".join(map(str, pids)))
    return blob

note = sys.argv[3]
print(run_ranks(read, 2, sys.argv[1], sys.argv[2], note, timeout=60))
pids = [int(p) for r in range(2) for p in Path(f"{note}-{r}").read_text().split()]
# A git the rank did not stop is still running, or a zombie nobody reaped (we are its reaper)
print("git processes", len(pids), "left", sum(os.path.exists(f"/proc/{p}") for p in pids))
"""


def test_ranks_that_read_git_objects_leave_no_git_process(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "GIT_AUTHOR_NAME": "t"}
    env |= {"GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "a"], check=True, env=env)
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, env=env, capture_output=True,
        text=True,
    ).stdout.strip()  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(repo / ".git"), commit, str(tmp_path / "pids")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "[b'hello\\n', b'hello\\n']" in done.stdout, done.stdout
    assert "git processes 2 left 0" in done.stdout or "git processes 4 left 0" in done.stdout, (
        done.stdout
    )
