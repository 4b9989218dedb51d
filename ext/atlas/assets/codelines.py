"""Code that fits the column: every line of a highlighted block becomes its own block element,
so that a long line wraps with a hanging indent instead of scrolling the block sideways.

At 1280 px, 13 of the 15 code blocks of the MLA page scrolled sideways, 24 of 32 on
collectives. Wrapping alone would let a continuation start under the line number; the hanging
indent (``atlas-codeline`` in ``atlas-code.css``) starts it further right, which is how a
reader tells a wrapped line from the next one. Line numbers stay right: they are Pygments'
``linenos`` spans, at the start of their own line's element. Pygments closes every token at
the end of a line (a highlighted line's ``hll`` span just after it, which is moved before), so
splitting its output at newlines gives well-formed lines. Each line is an inline-block as wide
as the block, followed by its newline: the copy button and a reader's selection get one newline
per line, and without the stylesheet the block reads as before.
"""

from __future__ import annotations

import re

_BLOCK = re.compile(r'(<div class="highlight"><pre>)(.*?)(</pre></div>)', re.S)


def _lines(code: str) -> str:
    # A highlighted line is the one token Pygments closes after its newline
    # (<span class="hll">...\n</span>): close it before, so that it stays inside its line.
    lines = code.replace("\n</span>", "</span>\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the block
    # inline-blocks joined by the newlines: without the stylesheet (a text browser, reader
    # mode) the block is the plain <pre> it was, and a copy gets one newline per line
    return "".join(f'<span class="atlas-codeline">{line or "&#8203;"}</span>\n' for line in lines)


def wrap_code_lines(body: str) -> str:
    """The page body with each highlighted block's lines wrapped (idempotent)."""
    if "atlas-codeline" in body:
        return body
    return _BLOCK.sub(lambda m: m.group(1) + _lines(m.group(2)) + m.group(3), body)
