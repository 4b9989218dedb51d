"""Build the Chinese-edition fixture book (tests/roots/test-i18n) as ``make html`` does: the
English edition into OUT/html, the Chinese one into OUT/html/zh, one lab cache for both."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "roots" / "test-i18n"
REPO = Path(__file__).resolve().parents[1]


@dataclass
class Built:
    src: Path
    out: Path
    lab_log: Path  # one line per run of the fixture's lab
    logs: dict[str, str]
    codes: dict[str, int]

    @property
    def html(self) -> Path:
        return self.out / "html"

    def page(self, name: str, language: str = "en") -> str:
        folder = self.html / "zh" if language == "zh_CN" else self.html
        return (folder / f"{name}.html").read_text(encoding="utf-8")


def copy_book(into: Path) -> Path:
    return Path(shutil.copytree(ROOT, into / "book"))


def lab_log_for(out: Path) -> Path:
    """Where the fixture's lab counts its runs: in /dev/shm, since the lab sandbox lets a lab
    write only there and in its scratch folder (a file under the test's tmp_path is refused)."""
    return Path("/dev/shm") / f"atlas-i18n-lab-{os.getpid()}-{out.parent.name}-{out.name}.log"


def env_for(lab_log: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["ATLAS_BOOK_CONF"] = str(REPO / "conf.py")
    env["ATLAS_I18N_LAB_LOG"] = str(lab_log)
    return env


def sphinx(src: Path, out: Path, language: str, lab_log: Path, *options: str):
    """One edition's ``sphinx-build``, with the Makefile's folders."""
    if language == "en":
        cmd = ["-M", "html", str(src), str(out)]
    else:
        cmd = ["-b", "html", str(src), str(out / "html" / "zh"), "-d", str(out / "doctrees-zh")]
        cmd += ["-D", f"language={language}"]
    return subprocess.run(
        [sys.executable, "-m", "sphinx", *cmd, *options],
        capture_output=True,
        text=True,
        env=env_for(lab_log),
        timeout=600,
    )


def build_both(src: Path, out: Path, *options: str, built: Built | None = None) -> Built:
    lab_log = built.lab_log if built else lab_log_for(out)
    built = built or Built(src, out, lab_log, {}, {})
    for language in ("en", "zh_CN"):
        proc = sphinx(src, out, language, lab_log, *options)
        built.logs[language] = proc.stdout + proc.stderr
        built.codes[language] = proc.returncode
    return built


def build_side_by_side(src: Path, out: Path) -> Built:
    """Both editions at once, as ``make html`` runs them (make -j2)."""
    lab_log = lab_log_for(out)
    built = Built(src, out, lab_log, {}, {})
    procs = {}
    for language in ("en", "zh_CN"):
        if language == "en":
            cmd = ["-M", "html", str(src), str(out)]
        else:
            cmd = ["-b", "html", str(src), str(out / "html" / "zh"), "-d", str(out / "doctrees-zh")]
            cmd += ["-D", f"language={language}"]
        procs[language] = subprocess.Popen(
            [sys.executable, "-m", "sphinx", *cmd],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env_for(lab_log),
        )
    for language, proc in procs.items():
        output, _ = proc.communicate(timeout=600)
        built.logs[language] = output
        built.codes[language] = proc.returncode
    return built
