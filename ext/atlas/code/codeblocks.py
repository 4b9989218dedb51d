"""Selected code as the reader sees it: one numbered literal block per segment, and an elision
line between two segments that says which lines are not shown.

Two directives quote code through :mod:`atlas.code.select`: ``upstream`` (code at an
upstream pin) and ``labcode`` (:mod:`atlas.teach.labcode`, our own labkit code). They render
their segments here, once, so that they number, elide and highlight alike; the copies they had
before had begun to differ in the elision's words and in ``force``. It knows nothing of git,
pins or the working tree. docutils is imported when blocks are built, not with the module:
``atlas.code`` loads no Sphinx or docutils, for the commands that quote code without a build.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from atlas.code.select import Segment

if TYPE_CHECKING:
    from docutils import nodes
    from sphinx.util.docutils import SphinxDirective

ELISION = "\u22ee {n} lines not shown (L{a}\u2013L{b})"
ELISION_ONE = "\u22ee 1 line not shown (L{a})"


def elision(previous: Segment, following: Segment) -> str:
    """The words for the lines between two segments: ``⋮ 14 lines not shown (L4–L17)``."""
    first, last = previous.end + 1, following.start - 1
    if last > first:
        return ELISION.format(n=last - first + 1, a=first, b=last)
    return ELISION_ONE.format(a=first)


def code_blocks(
    segments: Sequence[Segment],
    *,
    language: str,
    emphasize: Sequence[int] = (),
    kind: str,
    directive: SphinxDirective | None = None,
) -> list[nodes.Element]:
    """One literal block per segment, numbered from its first line in the file, with an
    elision paragraph between segments.

    ``kind`` names the CSS classes (``upstream-code``, ``upstream-elision``; ``labcode-...``);
    ``emphasize`` holds file line numbers; ``directive``, when given, sets each block's source
    and line (what Sphinx reports a highlighting warning at). ``force`` is set: quoted code is
    shown as is, even where the lexer stumbles on it.
    """
    from docutils import nodes

    out: list[nodes.Element] = []
    for i, seg in enumerate(segments):
        if i:
            text = elision(segments[i - 1], seg)
            out.append(nodes.paragraph(text, text, classes=[f"{kind}-elision"]))
        code = "\n".join(seg.lines)
        block = nodes.literal_block(code, code, classes=[f"{kind}-code"])
        block["language"] = language
        block["linenos"] = True
        block["force"] = True
        hl = [n - seg.start + 1 for n in emphasize if seg.start <= n <= seg.end]
        block["highlight_args"] = {"linenostart": seg.start, **({"hl_lines": hl} if hl else {})}
        if directive is not None:
            directive.set_source_info(block)
        out.append(block)
    return out
