"""The system tools `make pdf` needs, and the one `apt-get install` line that provides them.

A PDF build that starts without them fails late and obscurely (a LaTeX package missing on the
third xelatex pass, a font silently substituted, diagrams silently dropped), so the command
checks everything first and names the Debian packages to install.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

PUPPETEER_CONFIG = Path(__file__).parent / "puppeteer-config.json"


@dataclass(frozen=True)
class Requirement:
    """One thing the PDF build needs and the Debian package that provides it."""

    what: str  # shown to the user: "xelatex", "font FreeSerif", "LaTeX package xeCJK.sty"
    package: str  # Debian package name
    present: Callable[[], bool]


def _program(name: str) -> Callable[[], bool]:
    return lambda: shutil.which(name) is not None


def _file(path: str | Path) -> Callable[[], bool]:
    return lambda: Path(path).is_file()


def _latex_package(sty: str) -> Callable[[], bool]:
    def present() -> bool:
        if shutil.which("kpsewhich") is None:
            return False
        out = subprocess.run(["kpsewhich", sty], capture_output=True, text=True)
        return out.returncode == 0 and bool(out.stdout.strip())

    return present


def _font(family: str) -> Callable[[], bool]:
    def present() -> bool:
        if shutil.which("fc-list") is None:
            return False
        out = subprocess.run(
            ["fc-list", f":family={family}", "family"], capture_output=True, text=True
        )
        return bool(out.stdout.strip())

    return present


def chromium_path(config: Path = PUPPETEER_CONFIG) -> str:
    """The browser mermaid-cli drives, as the committed puppeteer config names it."""
    return str(json.loads(config.read_text(encoding="utf-8"))["executablePath"])


def requirements() -> list[Requirement]:
    """Everything the PDF build uses, in the order a reader would install it."""
    return [
        Requirement("make", "make", _program("make")),
        Requirement("xelatex", "texlive-xetex", _program("xelatex")),
        Requirement("latexmk", "latexmk", _program("latexmk")),
        Requirement("xindy (the index)", "xindy", _program("xindy")),
        Requirement("fc-list", "fontconfig", _program("fc-list")),
        Requirement(
            "LaTeX package fontspec.sty",
            "texlive-latex-recommended",
            _latex_package("fontspec.sty"),
        ),
        Requirement(
            "LaTeX package fncychap.sty", "texlive-latex-extra", _latex_package("fncychap.sty")
        ),
        Requirement("LaTeX package xeCJK.sty", "texlive-lang-chinese", _latex_package("xeCJK.sty")),
        Requirement("font FreeSerif", "fonts-freefont-otf", _font("FreeSerif")),
        Requirement("font FreeSans", "fonts-freefont-otf", _font("FreeSans")),
        Requirement("font DejaVu Sans Mono", "fonts-dejavu-core", _font("DejaVu Sans Mono")),
        Requirement("font Noto Serif CJK SC", "fonts-noto-cjk", _font("Noto Serif CJK SC")),
        Requirement("font Noto Sans Mono CJK SC", "fonts-noto-cjk", _font("Noto Sans Mono CJK SC")),
        Requirement("font Symbola (symbols, emoji)", "fonts-symbola", _font("Symbola")),
        Requirement("rsvg-convert (SVG figures)", "librsvg2-bin", _program("rsvg-convert")),
        Requirement(
            f"browser {chromium_path()} (mermaid diagrams)", "chromium", _file(chromium_path())
        ),
    ]


def missing(reqs: Iterable[Requirement]) -> list[Requirement]:
    return [r for r in reqs if not r.present()]


def apt_line(absent: Iterable[Requirement]) -> str:
    """The single command that installs every absent requirement (packages deduplicated)."""
    packages = list(dict.fromkeys(r.package for r in absent))
    return "sudo apt-get install --no-install-recommends " + " ".join(packages)


def report(absent: list[Requirement]) -> str:
    lines = ["The PDF needs system tools that are not installed:"]
    lines += [f"  - {r.what} (Debian package {r.package})" for r in absent]
    lines += ["Install them with:", f"  {apt_line(absent)}"]
    return "\n".join(lines)
