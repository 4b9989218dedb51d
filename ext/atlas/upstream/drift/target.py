"""The commit a pin moves to: REV resolved in the upstream's store, fetched (trees only) when
the store lacks it, or the remote's default branch when no REV is given."""

from __future__ import annotations

from pathlib import Path

from atlas.git.refs import delete_ref, rev_parse_commit, update_ref
from atlas.git.revs import UnsafePath, expand_rev, is_full_sha, is_sha_prefix
from atlas.git.store import GitStore
from atlas.upstream import partialclone
from atlas.upstream.drift.model import DriftError

HEAD_REF = "refs/atlas/head"  # where the remote's default branch is fetched to
FETCHED_REF = "refs/atlas/fetched"  # a named REV while it is fetched, before it gets its own ref


def resolve_target(git_dir: Path, rev: str | None, ours: bool) -> str:
    """The full SHA of the target commit, fetching it (trees only) when the store lacks it.

    No REV: the remote's default branch (fetched when reachable), else the newest commit the
    store already has (``refs/atlas/head``, ``origin/HEAD``, ``HEAD``). ``ours``: the store is
    the book's own partial clone, which may fetch; an existing one (an initialised submodule)
    is only read.
    """
    if rev is None:
        if ours:
            try:
                spec = f"+HEAD:{HEAD_REF}"
                partialclone.run_fetch(
                    git_dir,
                    ["--depth=1", "--filter=blob:none", "origin", spec],
                    None,
                    "trees",
                    None,
                    quick=True,
                )
            except partialclone.FetchError:
                pass  # offline: fall back on what the store holds
        for name in (HEAD_REF, "refs/remotes/origin/HEAD", "HEAD"):
            found = rev_parse_commit(git_dir, name)
            if found:
                return found
        raise DriftError(
            f"{git_dir} holds no branch head and the remote cannot be reached; give REV"
        )
    store = GitStore(git_dir)
    try:
        found = expand_rev(rev, store=store)  # the one rule: the store's objects decide
    except UnsafePath as exc:
        raise DriftError(str(exc)) from None
    except LookupError as exc:
        raise DriftError(f"{rev}: {exc}; give more hex digits") from None
    finally:
        store.close()
    if found and not partialclone.missing_commits(git_dir, [found]):
        return found
    if not ours and not found:
        raise DriftError(f"{rev} is not in {git_dir}; fetch it there first")
    if is_full_sha(rev.lower()) or found:
        target = found or rev.lower()
        partialclone.fetch_commits(git_dir, [target], (), None, quick=False)
        return target
    if is_sha_prefix(rev, max_digits=39, any_case=True):
        raise DriftError(f"{rev} is a short SHA the store does not hold; give the full SHA")
    partialclone.run_fetch(
        git_dir,
        ["--depth=1", "--filter=blob:none", "origin", f"+{rev}:{FETCHED_REF}"],
        None,
        "trees",
        None,
        quick=False,
    )
    target = rev_parse_commit(git_dir, FETCHED_REF)
    if target is None:
        raise DriftError(f"{rev} did not resolve to a commit at the remote")
    update_ref(git_dir, f"{partialclone.COMMIT_REF}{target}", target)  # kept from gc
    delete_ref(git_dir, FETCHED_REF)
    return target
