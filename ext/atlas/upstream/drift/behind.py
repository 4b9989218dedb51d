"""Where a page records why a citation stays behind its upstream's pin.

A citation at a revision older than the pin is a warning (``upstream.behind``) in every build
unless the page says why, next to the citation:

- a directive takes the option ``:behind: REASON``;
- a role (which has no options) is named in a MyST comment of its page,
  ``% upstream-behind: CITATION -- REASON``, CITATION written exactly as in the role.

``review`` writes both forms (:func:`keep_lines`); the build and ``check`` read them
(:func:`role_reasons`).
"""

from __future__ import annotations

import re

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
