"""Where the book's repository lives, and the addresses derived from it: a file at the branch,
its edit page, a new issue with its title and text filled in.

Why one object: the repository's address is one setting (``atlas_repository_url``, with
``atlas_repository_branch``), and every link out of the book (furo's view and edit buttons and
footer icon, the "report a problem" link, the PDF's labcode captions, "Run at home") is made
from it, never from a second copy of the address. The hosts are those whose addresses furo's
edit button knows how to build (GitHub and GitLab); another host would leave furo warning on
every page, so the setting refuses it, at its line in ``conf.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlencode

# host -> (file view, new issue, its title and text fields)
HOSTS = {
    "github.com": ("{url}/blob/{branch}/{path}", "{url}/issues/new", "title", "body"),
    "gitlab.com": (
        "{url}/-/blob/{branch}/{path}",
        "{url}/-/issues/new",
        "issue[title]",
        "issue[description]",
    ),
}
# https://HOST/OWNER/NAME (GitLab allows groups: OWNER/GROUP/NAME), nothing after the name
ADDRESS = re.compile(r"^https://(?P<host>[^/]+)/(?P<path>[\w.-]+(?:/[\w.-]+)+)$")
EXAMPLE = "https://github.com/OWNER/NAME"


def address_problem(value: str | None) -> str | None:
    """What is wrong with a repository address (the setting's rule), or None."""
    if value is None:
        return None
    found = ADDRESS.match(value.rstrip("/"))
    if found is None or found["host"] not in HOSTS:
        return (
            f"must be the repository's own address, {EXAMPLE} (GitHub or GitLab, https, nothing "
            "after the name: the branch is atlas_repository_branch)"
        )
    pages = re.search(r"/(-/)?(blob|tree|edit|issues)(/|$)", value)
    if pages or (found["host"] == "github.com" and found["path"].count("/") != 1):
        return f"must be the repository's own address, {EXAMPLE}, not a page in it"
    return None


def branch_problem(value: str) -> str | None:
    ok = value and not value.startswith(("/", "-")) and not re.search(r"\s|\.\.", value)
    return None if ok else "must be a branch name, such as 'main'"


@dataclass(frozen=True)
class Repository:
    """The repository at one branch; ``source``: the pages' folder in it ("source/")."""

    url: str
    branch: str = "main"
    source: str = "source/"

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", self.url.rstrip("/"))

    @property
    def host(self) -> str:
        return self.url.split("/")[2]

    @property
    def name(self) -> str:
        """The folder ``git clone`` makes."""
        return self.url.rsplit("/", 1)[-1].removesuffix(".git")

    def file(self, path: str) -> str:
        """A file (repository path) at the branch, as the host shows it."""
        return HOSTS[self.host][0].format(url=self.url, branch=self.branch, path=path)

    def new_issue(self, title: str, body: str) -> str:
        """The host's "new issue" form with ``title`` and ``body`` filled in."""
        _view, form, title_field, body_field = HOSTS[self.host]
        query = urlencode({title_field: title, body_field: body})
        return form.format(url=self.url) + "?" + query


__all__ = ["HOSTS", "Repository", "address_problem", "branch_problem"]
