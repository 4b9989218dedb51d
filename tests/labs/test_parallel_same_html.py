"""A parallel build (-j 2) writes the same HTML as a serial one, labs page included."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def html_of(src: Path, out: Path, *options: str) -> dict[str, bytes]:
    cmd = [sys.executable, "-m", "sphinx", "-M", "html", str(src), str(out), "-q", *options]
    cmd += ["-D", "atlas_labs_show_times=0"]  # run times differ from run to run anyway
    env = dict(os.environ)  # ATLAS_BOOK_CONF: the fixtures' settings (conftest.py)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    html = out / "html"
    return {str(p.relative_to(html)): p.read_bytes() for p in sorted(html.rglob("*.html"))}


def test_parallel_build_writes_the_serial_html(tmp_path: Path, rootdir: Path) -> None:
    serial_src = shutil.copytree(rootdir / "test-labs-parallel", tmp_path / "serial" / "book")
    parallel_src = shutil.copytree(rootdir / "test-labs-parallel", tmp_path / "parallel" / "book")
    serial = html_of(serial_src, serial_src / "_build")
    parallel = html_of(parallel_src, parallel_src / "_build", "-j", "2")
    assert serial.keys() == parallel.keys() and "labs.html" in serial
    differ = [name for name in serial if serial[name] != parallel[name]]
    assert differ == []
