"""A citation left behind its upstream's pin: found in every build, silent only with a reason.

A bump leaves the citations it cannot carry reading the old pin (``NAME@OLDSHA ...``) so the
book still builds; nothing would say so again. A citation whose explicit revision is a commit
*older* than the pin (by committer time, read from the store; without objects, a commit the
book once pinned) is reported as ``upstream.behind`` at its page and line, naming ``review``
as the fix, unless the page records why it stays (:mod:`atlas.upstream.drift.behind`: the
``:behind:`` option, or a ``% upstream-behind:`` comment for a role). A citation of a newer
commit is not behind, nor one of a tag (``demo@v1``: a release named on purpose; what a bump
leaves behind is a SHA).

Where a page records the reason, next to the citation:

- a directive takes the option ``:behind: REASON``;
- a role (which has no options) is named in a MyST comment of its page,
  ``% upstream-behind: CITATION -- REASON``, CITATION written exactly as in the role.

``review`` writes both forms (:func:`keep_lines`); the build reads them (:func:`role_reasons`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from atlas.git import repo
from atlas.git.revs import is_sha_prefix
from atlas.git.store import GitStore, GitStoreError, MissingObject
from atlas.upstream.registry import Upstream


def may_be_behind(rev: str) -> bool:
    """Whether a citation's explicit revision can leave it behind: a SHA, not a tag."""
    return is_sha_prefix(rev, any_case=True)


def commit_time(store: GitStore, commit: str) -> int | None:
    """The committer time of a commit in the store (None: not there)."""
    try:
        kind, data = store.read_object(commit)
    except (MissingObject, GitStoreError, LookupError, ValueError):
        return None
    if kind != "commit":
        return None
    for line in data.split(b"\n\n", 1)[0].split(b"\n"):
        if line.startswith(b"committer "):
            try:
                return int(line.rsplit(b" ", 2)[1])
            except (IndexError, ValueError):
                return None
    return None


@lru_cache(maxsize=64)
def _past_pins(book_root: str, path: str) -> frozenset[str]:
    return frozenset(repo.past_pins(Path(book_root), path))


def is_behind(book_root: Path, up: Upstream, store: GitStore | None, commit: str) -> bool:
    """Whether ``commit`` is older than ``up``'s pin."""
    if not up.pin or commit == up.pin:
        return False
    if store is not None:
        then, now = commit_time(store, commit), commit_time(store, up.pin)
        if then is not None and now is not None:
            return then < now
    return commit in _past_pins(str(book_root), up.path)


def message(raw: str, up: Upstream, fix: str) -> str:
    return (
        f"upstream citation '{raw}' reads a commit older than {up.name}'s pin "
        f"{up.pin[:10] if up.pin else '?'}: move it with `{fix}` (accept its suggestion), "
        "or record why it stays (the option :behind: REASON; for a role, a comment "
        "'% upstream-behind: CITATION -- REASON' in the page)"
    )


OPTION = "behind"
COMMENT = re.compile(r"^\s*%\s*upstream-behind:\s*(?P<citation>.+?)\s+--\s+(?P<reason>\S.*?)\s*$")
YAML_START = "---"


def role_reasons(page_lines: list[str]) -> dict[str, str]:
    """CITATION -> REASON of every ``% upstream-behind:`` comment of a page."""
    found = {}
    for line in page_lines:
        match = COMMENT.match(line)
        if match:
            found[match["citation"]] = match["reason"]
    return found


def keep_lines(lines: list[str], line: int, kind: str, citation: str, reason: str) -> None:
    """Record in the page (``lines``, with their endings) why the citation at 1-based ``line``
    stays: insert the directive's option, or the comment after the role's paragraph."""
    reason = " ".join(reason.split())
    if kind == "directive":
        at = line  # just after the fence line
        if at < len(lines) and lines[at].strip() == YAML_START:
            lines.insert(at + 1, f"{OPTION}: {reason}\n")
        else:
            lines.insert(at, f":{OPTION}: {reason}\n")
        return
    j = line
    while j < len(lines) and lines[j].strip():
        j += 1
    lines[j:j] = ["\n", f"% upstream-behind: {citation} -- {reason}\n"]
