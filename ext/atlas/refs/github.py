"""GitHub links at a pinned commit, verified from the local git objects instead of the network.

GitHub draws ``#L10-L40`` anchors with JavaScript, so a link checker that fetches the page can
only say the file exists, and often not even that (rate limits). When the repository is one of
the book's upstreams and its objects are here, the git objects answer exactly: the commit
exists, the file exists at that commit, and it has the cited lines. Links at a package
upstream's tag (``/blob/v2.13.0/...`` of PyTorch) are answered from the installed wheel's files,
each verified against its RECORD hash (:func:`atlas.upstream.packages.verify_link`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

PINNED = re.compile(
    r"^https://github\.com/(?P<slug>[\w.-]+/[\w.-]+)/(?P<kind>blob|tree)/(?P<commit>[0-9a-fA-F]{7,40})"
    r"/(?P<path>[^#?]+?)/?(?:#L(?P<start>\d+)(?:C\d+)?(?:-L(?P<end>\d+)(?:C\d+)?)?|#[^#]*)?$"
)


@dataclass(frozen=True)
class PinnedLink:
    slug: str
    kind: str
    commit: str
    path: str
    lines: tuple[int, int] | None


@dataclass(frozen=True)
class Verdict:
    """``ok`` True/False when the objects answered; None when they could not (go online)."""

    ok: bool | None
    message: str


def parse(uri: str) -> PinnedLink | None:
    match = PINNED.match(uri)
    if match is None:
        return None
    lines = None
    if match["start"]:
        start = int(match["start"])
        lines = (start, int(match["end"] or start))
    return PinnedLink(
        match["slug"], match["kind"], match["commit"].lower(), unquote(match["path"]), lines
    )


def count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


class Verifier:
    """Answers pinned GitHub links from the object stores of the book's registered upstreams."""

    def __init__(self, book_root: Path) -> None:
        self.book_root = Path(book_root)
        self._by_slug: dict[str, object] | None = None

    def _upstreams(self) -> dict[str, object]:
        if self._by_slug is None:
            try:
                from atlas.upstream.registry import load_registry

                registry = load_registry(self.book_root)
            except (ImportError, OSError, ValueError):
                registry = {}
            self._by_slug = {
                up.github_slug.lower(): up for up in registry.values() if up.github_slug
            }
        return self._by_slug

    def verify(self, uri: str) -> Verdict | None:
        """None when ``uri`` is not a pinned GitHub link of a registered upstream."""
        from atlas.upstream.packages import verify_link

        # a link at a package upstream's tag: answered from the installed wheel's files
        found = verify_link(self.book_root, uri)
        if found is not None:
            return Verdict(*found)
        link = parse(uri)
        if link is None:
            return None
        upstream = self._upstreams().get(link.slug.lower())
        if upstream is None:
            return None
        from atlas.upstream.gitstore import GitStoreError, MissingObject, UnsafePath, store_for
        from atlas.upstream.registry import object_store

        name = upstream.name  # type: ignore[attr-defined]
        git_dir = object_store(self.book_root, upstream)  # type: ignore[arg-type]
        if git_dir is None:
            why = (
                "is link-only (too large to fetch): checked online"
                if upstream.pin is None  # type: ignore[attr-defined]
                else "has no local objects (make upstreams)"
            )
            return Verdict(None, f"unverified offline: upstream '{name}' {why}")
        where = f"{name}@{link.commit[:12]}"
        try:
            store = store_for(git_dir)
            commit = store.resolve(link.commit)
            if commit is None:
                return Verdict(
                    None,
                    f"unverified offline: commit {link.commit} is not in the objects of '{name}'",
                )
            found = store.tree_entry(commit, link.path)
            if found is None:
                return Verdict(False, f"{link.path} does not exist at {where} (git objects)")
            kind = found[1]
            if link.kind == "tree":
                ok = kind == "tree"
                return Verdict(
                    ok,
                    f"folder {link.path} at {where}"
                    if ok
                    else f"{link.path} is not a folder at {where}",
                )
            if kind != "blob":
                return Verdict(False, f"{link.path} is a {kind}, not a file, at {where}")
            if link.lines is None:
                return Verdict(True, f"{link.path} exists at {where}")
            total = count_lines(store.read_blob(commit, link.path))
        except MissingObject as exc:
            return Verdict(None, f"unverified offline: {exc}")
        except (UnsafePath, LookupError) as exc:
            return Verdict(False, f"{exc}")
        except (GitStoreError, OSError) as exc:
            return Verdict(None, f"unverified offline: cannot read the objects of '{name}': {exc}")
        start, end = link.lines
        if start < 1 or end < start:
            return Verdict(False, f"line range L{start}-L{end} is empty")
        if end > total:
            return Verdict(
                False, f"{link.path} has {total} lines at {where}; the link cites L{start}-L{end}"
            )
        return Verdict(True, f"{link.path} has lines {start}-{end} at {where} ({total} lines)")
