"""Read what xelatex wrote to its log: errors, glyphs no font had, overfull lines.

LaTeX reports positions in the generated ``atlas.tex``; a writer thinks in pages. Each
``.tex`` line is mapped back to the book page it came from through the ``\\label`` that Sphinx
writes at the start of every document (``\\label{\\detokenize{DOCNAME::doc}}``).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path

# OpenType fonts report ``(U+1F680)``, TeX math fonts (cmmi10) ``("3B1)``.
MISSING_CHAR = re.compile(
    r'^Missing character: There is no (.+?) \((?:U\+|")([0-9A-F]{2,6})\) in font ([^/:!]+)'
)
OVERFULL = re.compile(r"^Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\) .*?lines? (\d+)")
FILE_LINE_ERROR = re.compile(r"^(?:\./)?[^\s:]+\.(?:tex|sty|cls):(\d+): (.+)$")
TEX_LINE = re.compile(r"^l\.(\d+) ")
DOC_LABEL = re.compile(r"\\label\{\\detokenize\{([^{}]+?)::doc\}\}")


@dataclass
class Glyph:
    char: str
    codepoint: str
    fonts: set[str] = field(default_factory=set)
    pages: set[str] = field(default_factory=set)


@dataclass
class LogReport:
    error: str | None = None
    error_line: int | None = None
    missing: dict[str, Glyph] = field(default_factory=dict)
    overfull: list[tuple[float, int]] = field(default_factory=list)  # (points, .tex line)


class PageMap:
    """Maps a line of the generated ``.tex`` file to the book page (docname) it came from."""

    def __init__(self, tex: str) -> None:
        self.lines = tex.splitlines()
        self.starts: list[int] = []
        self.docs: list[str] = []
        for number, line in enumerate(self.lines, start=1):
            for match in DOC_LABEL.finditer(line):
                self.starts.append(number)
                self.docs.append(match.group(1))

    def page(self, line: int) -> str:
        i = bisect.bisect_right(self.starts, line) - 1
        return self.docs[i] if i >= 0 else "(front matter)"

    def pages_with(self, char: str) -> set[str]:
        return {self.page(n) for n, text in enumerate(self.lines, start=1) if char in text}


def scan(log: str) -> LogReport:
    report = LogReport()
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if m := MISSING_CHAR.match(line):
            code = m.group(2).rjust(4, "0")
            glyph = report.missing.setdefault(code, Glyph(m.group(1), code))
            glyph.fonts.add(m.group(3).strip("[]"))
        elif m := OVERFULL.match(line):
            report.overfull.append((float(m.group(1)), int(m.group(2))))
        elif report.error is None and (line.startswith("! ") or FILE_LINE_ERROR.match(line)):
            context = lines[i : i + 8]
            report.error = "\n".join(context).rstrip()
            if m := FILE_LINE_ERROR.match(line):
                report.error_line = int(m.group(1))
            else:
                for follow in context:
                    if t := TEX_LINE.match(follow):
                        report.error_line = int(t.group(1))
                        break
    return report


def read(latex_dir: Path, stem: str) -> tuple[LogReport, PageMap]:
    """Scan ``STEM.log`` in ``latex_dir`` and attach book pages to what it found."""
    log_path = latex_dir / f"{stem}.log"
    log = log_path.read_text(encoding="utf-8", errors="replace") if log_path.exists() else ""
    tex_path = latex_dir / f"{stem}.tex"
    pages = PageMap(tex_path.read_text(encoding="utf-8") if tex_path.exists() else "")
    report = scan(log)
    for glyph in report.missing.values():
        glyph.pages = pages.pages_with(glyph.char)
    return report, pages
