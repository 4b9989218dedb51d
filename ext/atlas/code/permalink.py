"""GitHub permalinks, built and parsed in one place.

The directive and the role link every citation to ``.../blob/REV/PATH#L10-L40``; the link
checker answers such links from the git objects. Both sides must agree on the format, so the
writer (:func:`build`) and the reader (:func:`parse`) live here, side by side, and a test checks
that one undoes the other. Lines are counted as the citations number them
(:func:`atlas.code.select.line_count`). The repository's address comes from its URL here
too (:func:`github_slug`, :func:`web_url`), for git and package upstreams alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from atlas.git.revs import is_sha_prefix

# A repository on github.com, over https or ssh (``git@github.com:O/R.git``).
_GITHUB = re.compile(
    r"^(?:https?://|ssh://git@|git@)github\.com[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$"
)
_LINK = re.compile(
    r"^https://github\.com/(?P<slug>[\w.-]+/[\w.-]+)/(?P<kind>blob|tree)/(?P<rev>[^/#?]+)"
    r"/(?P<path>[^#?]+?)/?(?:#L(?P<start>\d+)(?:C\d+)?(?:-L(?P<end>\d+)(?:C\d+)?)?|#[^#]*)?$"
)


@dataclass(frozen=True)
class Permalink:
    """A link to a file (``blob``) or folder (``tree``) of a GitHub repository at one revision."""

    slug: str  # OWNER/REPO
    kind: str  # "blob" or "tree"
    rev: str  # a commit SHA or a tag, as written in the link
    path: str  # unquoted
    lines: tuple[int, int] | None = None  # first and last line (#L10-L40; #L10 is (10, 10))

    @property
    def commit(self) -> str | None:
        """The revision in lower case when it is a commit SHA (7 to 40 hex digits), else None."""
        return self.rev.lower() if is_commit(self.rev) else None


def is_commit(rev: str) -> bool:
    """``rev`` reads as a commit SHA in a link: 7 to 40 hex digits, either case."""
    return is_sha_prefix(rev, any_case=True)


def github_slug(url: str) -> str | None:
    """``OWNER/REPO`` of a repository URL on github.com (https or ssh), else None."""
    match = _GITHUB.match(url.strip())
    return f"{match.group(1)}/{match.group(2)}" if match else None


def web_url(url: str) -> str:
    """A repository's web address: ``https://github.com/OWNER/REPO`` for GitHub (whatever the
    URL's scheme), else the URL without a trailing ``/`` or ``.git``."""
    slug = github_slug(url)
    if slug:
        return f"https://github.com/{slug}"
    return url.rstrip("/").removesuffix(".git")


def fragment(lines: tuple[int, int] | None) -> str:
    """``#L10-L40``, ``#L10`` for one line, nothing for a whole file."""
    if not lines:
        return ""
    start, end = lines
    return f"#L{start}" if start == end else f"#L{start}-L{end}"


def build(web_url: str, rev: str, path: str, lines: tuple[int, int] | None = None) -> str:
    """``WEB_URL/blob/REV/path#L10-L40``; ``web_url`` is the repository's web address."""
    return f"{web_url}/blob/{rev}/{quote(path, safe='/')}{fragment(lines)}"


def parse(url: str) -> Permalink | None:
    """The link :func:`build` made (or any GitHub blob or tree link), or None for other URLs.
    A fragment other than ``#L..`` (a heading anchor) reads as no lines."""
    match = _LINK.match(url)
    if match is None:
        return None
    lines = None
    if match["start"]:
        start = int(match["start"])
        lines = (start, int(match["end"] or start))
    return Permalink(match["slug"], match["kind"], match["rev"], unquote(match["path"]), lines)
