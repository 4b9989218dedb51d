"""The real conf.py builds a small book strictly: the smoke test beside the fixtures' minimal
settings (tests/roots/book_conf.py), so that a broken real configuration or bibliography fails
here in `make test`, not only in the real book's build (`pytest -m slow`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def test_the_real_conf_builds_a_small_book_strictly(tmp_path: Path, rootdir: Path) -> None:
    book = shutil.copytree(rootdir / "test-real-conf", tmp_path / "book")
    cmd = [sys.executable, "-m", "sphinx", "-M", "html", str(book), str(book / "_build"), "-q"]
    cmd += ["-W", "--keep-going"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ), timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    index = (book / "_build" / "html" / "index.html").read_text(encoding="utf-8")
    assert "Vaswani" in index  # the citation resolved against the real bibliography
    bibliography = (book / "_build" / "html" / "bibliography.html").read_text(encoding="utf-8")
    assert "attention is all you need" in bibliography.lower()
