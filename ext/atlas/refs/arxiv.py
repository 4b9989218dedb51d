"""arXiv identifiers and paper URLs: what is well formed, and which paper a URL names.

Kept free of Sphinx so the bibliography checks, the page checks and the tests share one
definition. arXiv's identifier schemes (https://info.arxiv.org/help/arxiv_identifier.html):
``YYMM.NNNN`` from 0704 to 1412, ``YYMM.NNNNN`` from 1501, ``archive[.SC]/YYMMNNN`` before 0704.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

NEW_ID = re.compile(r"^(?P<yy>\d{2})(?P<mm>\d{2})\.(?P<num>\d{4,5})(?P<version>v\d+)?$")
OLD_ID = re.compile(
    r"^(?P<archive>[a-z]+(?:-[a-z]+)*)(?:\.[A-Z]{2})?/(?P<yy>\d{2})(?P<mm>\d{2})(?P<num>\d{3})"
    r"(?P<version>v\d+)?$"
)
ARXIV_HOSTS = {"arxiv.org", "www.arxiv.org", "export.arxiv.org"}
# Paths that name one paper; the rest of arxiv.org (listings, help) is not a paper.
PAPER_PATH = re.compile(r"^/(?P<kind>abs|pdf|html)/(?P<id>.+?)(?:\.pdf)?/?$")
DOI_HOSTS = {"doi.org", "dx.doi.org", "www.doi.org"}


def id_problem(ident: str, *, allow_version: bool = False) -> str | None:
    """Why ``ident`` is not a well-formed arXiv identifier, or None when it is."""
    match = NEW_ID.match(ident) or OLD_ID.match(ident)
    if match is None:
        return (
            f"'{ident}' is not an arXiv identifier (expected YYMM.NNNNN such as 2104.04473, "
            "or archive/YYMMNNN such as hep-th/9901001)"
        )
    yymm = int(match["yy"] + match["mm"])
    if not 1 <= int(match["mm"]) <= 12:
        return f"'{ident}' has month {match['mm']}, which does not exist"
    if match.re is NEW_ID:
        if yymm < 704:
            return f"'{ident}': new-style identifiers start in April 2007 (0704)"
        digits = 4 if yymm < 1501 else 5
        if len(match["num"]) != digits:
            month = match["yy"] + match["mm"]
            return f"'{ident}': identifiers of {month} have {digits} digits after the dot"
    elif not (yymm >= 9108 or yymm < 704):
        return f"'{ident}': old-style identifiers end in March 2007 (0703)"
    if match["version"] and not allow_version:
        return f"'{ident}' carries a version; give the identifier without '{match['version']}'"
    return None


def strip_version(ident: str) -> str:
    return re.sub(r"v\d+$", "", ident)


def paper_url(url: str) -> tuple[str, str] | None:
    """(kind, identifier) when ``url`` is an arXiv page of one paper (abs, pdf, html)."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or (parts.hostname or "") not in ARXIV_HOSTS:
        return None
    match = PAPER_PATH.match(unquote(parts.path))
    return (match["kind"], match["id"]) if match else None


def abs_url(ident: str) -> str:
    return f"https://arxiv.org/abs/{ident}"


def paper_identity(url: str) -> str | None:
    """A key naming the work a URL points at, for matching page links to bibliography entries:
    ``arxiv:ID`` (any version, abs or pdf), ``doi:DOI`` (any resolver), or the URL without
    scheme, ``www.``, fragment and trailing slash. None for what is not a web URL."""
    parts = urlsplit(url.strip())
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return None
    found = paper_url(url)
    if found is not None:
        return f"arxiv:{strip_version(found[1])}"
    host = parts.hostname.lower()
    if host in DOI_HOSTS and len(parts.path) > 1:
        return f"doi:{unquote(parts.path[1:]).lower()}"
    host = host.removeprefix("www.")
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"url:{host}{path}{query}"
