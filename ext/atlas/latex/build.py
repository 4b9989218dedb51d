"""`python -m atlas.latex build`: the offline PDF in three checked steps.

1. The system tools are all there (else: the one ``apt-get install`` line, exit 3).
2. Sphinx's latex builder writes ``BUILD/latex/STEM.tex`` (diagrams rendered on the way;
   a diagram that cannot be rendered stops the build, see :mod:`atlas.latex.mermaid`).
3. latexmk runs xelatex (and xindy for the index) until the cross-references settle. Its log
   is read: a LaTeX error is shown with the book page it came from; a character no font could
   draw fails the build, because the reader would see a blank where the text had a glyph.

The result is copied to ``BUILD/pdf/STEM.pdf`` only when all of that passed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from atlas.git.repo import last_commit_time
from atlas.latex import logscan, tools

# Overfull lines narrower than this are invisible in print; wider ones are listed.
OVERFULL_SHOWN_PT = 5.0


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _source_date_epoch(repo: Path) -> str | None:
    """The time of the book's last commit: the PDF's dates then follow the commit, not the
    clock (the diagrams Chromium draws still carry their own)."""
    return last_commit_time(repo)


def run_sphinx(
    source: Path, build: Path, conf_dir: Path, extra: list[str], edition: Edition | None = None
) -> int:
    from sphinx.cmd.build import build_main
    from sphinx.cmd.make_mode import run_make_mode

    # Quiet by default: Sphinx's closing advice ("run make in that directory") is what we do next.
    quiet = [] if any(a.startswith("-v") for a in extra) else ["-q"]
    if edition is None:
        return run_make_mode(
            ["latex", str(source), str(build), "-c", str(conf_dir), *quiet, *extra]
        )
    # A translation: the doctrees of its HTML build (a language change re-reads every page), the
    # lab cache of the book (BUILD/.labs-cache, beside those doctrees), its own LaTeX folder.
    return build_main(
        ["-b", "latex", str(source), str(edition.latex_dir(build)), "-c", str(conf_dir)]
        + ["-d", str(build / f"doctrees-{edition.folder}"), "-D", f"language={edition.language}"]
        + [*quiet, *extra]
    )


def run_latexmk(latex_dir: Path, log_file: Path, source: Path) -> int:
    env = dict(os.environ)
    env["LATEXOPTS"] = "-interaction=nonstopmode -halt-on-error -file-line-error"
    env["max_print_line"] = "10000"  # one log line per message, so that the log can be read
    if "SOURCE_DATE_EPOCH" not in env and (epoch := _source_date_epoch(source)):
        env["SOURCE_DATE_EPOCH"] = epoch
        env["FORCE_SOURCE_DATE"] = "1"
    make = ["make", "-C", str(latex_dir), "all-pdf"]
    if xindy := _xindy_options(latex_dir / "Makefile"):
        make.append(f"XINDYOPTS={xindy} -M atlas.xdy")
    with log_file.open("w", encoding="utf-8") as out:
        proc = subprocess.run(make, stdout=out, stderr=subprocess.STDOUT, env=env)
    return proc.returncode


def _xindy_options(makefile: Path) -> str | None:
    """Sphinx's xindy options (language, sphinx.xdy) as its generated Makefile sets them.

    Ours (atlas.xdy: page-range separators) are appended on the make command line, which is
    the one way to extend a variable the Makefile both assigns and exports.
    """
    if not makefile.exists():
        return None
    for line in makefile.read_text(encoding="utf-8").splitlines():
        if line.startswith("export XINDYOPTS"):
            return line.split("=", 1)[1].strip()
    return None


def _missing_glyphs_message(report: logscan.LogReport) -> str:
    lines = ["The PDF would lose characters that no font of the book can draw:"]
    for glyph in report.missing.values():
        pages = ", ".join(sorted(glyph.pages)) or "unknown page"
        fonts = ", ".join(sorted(glyph.fonts))
        lines.append(f"  U+{glyph.codepoint} {glyph.char!r} (not in {fonts}) on page(s): {pages}")
    lines.append(
        "Fix: in math ($...$), write Greek letters and symbols as LaTeX commands (\\alpha,"
        " \\le, \\to). In prose and code, the character needs a font: add one that covers it"
        " to ext/atlas/latex/texinputs/atlas.sty, or (upstream code) cite a range without"
        " that line."
    )
    return "\n".join(lines)


@dataclass(frozen=True)
class Edition:
    """A translated edition's PDF: ``-D language=LANGUAGE``, written as ``STEM-FOLDER.pdf``."""

    language: str  # zh_CN
    folder: str  # zh: as in atlas_i18n_editions

    def latex_dir(self, build_dir: Path) -> Path:
        return build_dir / f"latex-{self.folder}"


def build(
    source: Path,
    build_dir: Path,
    conf_dir: Path,
    stem: str = "atlas",
    extra: Sequence[str] = (),
    edition: Edition | None = None,
) -> int:
    """Build ``build_dir/pdf/STEM.pdf`` (``STEM-zh.pdf`` for the Chinese ``edition``); return the
    process exit status."""
    absent = tools.missing(tools.requirements())
    if absent:
        _say(tools.report(absent))
        return 3
    if rc := run_sphinx(source, build_dir, conf_dir, list(extra), edition):
        _say(f"PDF: the latex builder failed (exit {rc}); see the messages above.")
        return rc
    latex_dir = edition.latex_dir(build_dir) if edition else build_dir / "latex"
    if not (latex_dir / f"{stem}.tex").exists():
        _say(
            f"PDF: {latex_dir / (stem + '.tex')} was not written; check latex_documents in conf.py."
        )
        return 1
    _say("PDF: running latexmk (xelatex, xindy) ...")
    out_file = latex_dir / "latexmk.out"
    rc = run_latexmk(latex_dir, out_file, source)
    report, pages = logscan.read(latex_dir, stem)
    if rc != 0:
        where = ""
        if report.error_line is not None:
            where = (
                f" at {stem}.tex line {report.error_line} (page {pages.page(report.error_line)})"
            )
        _say(f"PDF: LaTeX failed{where}:\n{report.error or '(no error in the log)'}")
        _say(f"Full log: {latex_dir / (stem + '.log')}; latexmk output: {out_file}")
        return 1
    if report.missing:
        _say(_missing_glyphs_message(report))
        return 1
    wide = sorted({r for r in report.overfull if r[0] > OVERFULL_SHOWN_PT}, reverse=True)
    for points, line in wide[:10]:
        _say(f"PDF: a line runs {points:.1f}pt into the margin on page {pages.page(line)}")
    target = build_dir / "pdf" / (f"{stem}-{edition.folder}.pdf" if edition else f"{stem}.pdf")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(latex_dir / f"{stem}.pdf", target)
    _say(f"The PDF is in {target}")
    return 0
