"""GitHub links at a pinned commit, verified from the local git objects instead of the network.

GitHub draws ``#L10-L40`` anchors with JavaScript, so a link checker that fetches the page can
only say the file exists, and often not even that (rate limits). When the repository is one of
the book's upstreams and its objects are here, the git objects answer exactly: the commit
exists, the file exists at that commit, and it has the cited lines. Links at a package
upstream's tag (``/blob/v2.13.0/...`` of PyTorch) are answered from the installed wheel's files,
each verified against its RECORD hash (:func:`atlas.upstream.packages.links.verify_link`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from atlas.code.permalink import parse
from atlas.code.select import line_count
from atlas.git.store import GitStoreError, MissingObject, UnsafePath, store_for
from atlas.upstream.packages.links import verify_link
from atlas.upstream.registry import Upstream, load_registry, object_store


@dataclass(frozen=True)
class Verdict:
    """``ok`` True/False when the objects answered; None when they could not (go online)."""

    ok: bool | None
    message: str


class Verifier:
    """Answers pinned GitHub links from the object stores of the book's registered upstreams."""

    def __init__(self, book_root: Path, stores_root: Path | None = None) -> None:
        self.book_root = Path(book_root)
        self.stores_root = stores_root  # the book's extra object stores (atlas_upstreams_root)
        self._by_slug: dict[str, Upstream] | None = None

    def _upstreams(self) -> dict[str, Upstream]:
        if self._by_slug is None:
            try:
                registry = load_registry(self.book_root)
            except (OSError, ValueError):
                registry = {}
            self._by_slug = {
                up.github_slug.lower(): up for up in registry.values() if up.github_slug
            }
        return self._by_slug

    def verify(self, uri: str) -> Verdict | None:
        """None when ``uri`` is not a pinned GitHub link of a registered upstream."""
        # a link at a package upstream's tag: answered from the installed wheel's files
        found = verify_link(self.book_root, uri)
        if found is not None:
            return Verdict(*found)
        link = parse(uri)
        sha = link.commit if link else None
        if link is None or sha is None:  # not GitHub, or at a tag or branch: checked online
            return None
        upstream = self._upstreams().get(link.slug.lower())
        if upstream is None:
            return None
        name = upstream.name
        git_dir = object_store(self.book_root, upstream, self.stores_root)
        if git_dir is None:
            why = (
                "is link-only (too large to fetch): checked online"
                if upstream.pin is None
                else "has no local objects (make upstreams)"
            )
            return Verdict(None, f"unverified offline: upstream '{name}' {why}")
        where = f"{name}@{sha[:12]}"
        try:
            store = store_for(git_dir)
            commit = store.resolve(sha)
            if commit is None:
                return Verdict(
                    None, f"unverified offline: commit {sha} is not in the objects of '{name}'"
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
            total = line_count(store.read_blob(commit, link.path))
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
