"""GitHub permalinks, built and parsed in one place.

The directive and the role link every citation to ``.../blob/REV/PATH#L10-L40``; the link
checker answers such links from the git objects. Both sides must agree on the format, so the
writer (:func:`build`) and the reader (:func:`parse`) live here, side by side, and a test checks
that one undoes the other. Lines are counted as the citations number them
(:func:`atlas.upstream.select.line_count`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

COMMIT = re.compile(r"^[0-9a-fA-F]{7,40}$")
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
        return self.rev.lower() if COMMIT.match(self.rev) else None


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
