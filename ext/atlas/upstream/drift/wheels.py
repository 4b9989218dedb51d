"""The two versions a package bump compares, as verified files: wheels downloaded or given, and
the pinned version as installed.

A wheel carries no history; its ``RECORD`` gives a sha256 for every file, and a file is read
only after its bytes matched it (:class:`atlas.upstream.packages.files.FileSet`). A wheel not
given with ``--wheel``/``--old-wheel`` is downloaded with ``pip download --no-deps`` into a
temporary folder (pip's own cache answers a repeat).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from atlas.upstream.drift.model import DriftError
from atlas.upstream.packages.files import FileSet, PackageError, WheelFiles
from atlas.upstream.packages.installed import Installed, version_matches
from atlas.upstream.packages.registry import PackageUpstream


def download_wheel(name: str, version: str, dest: Path) -> Path:
    """``pip download --no-deps`` of NAME==VERSION (a wheel only) into ``dest``."""
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--quiet", "--dest", str(dest), f"{name}=={version}",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wheels = sorted(dest.glob("*.whl"))
    if proc.returncode != 0 or not wheels:
        said = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no wheel"]
        raise DriftError(
            f"cannot download the {name}=={version} wheel ({said[0]}); give one with --wheel PATH"
        )
    return wheels[0]


def open_wheel(path: Path, name: str, version: str) -> WheelFiles:
    """The files of a wheel that must be NAME at VERSION (DriftError when it is another)."""
    files = WheelFiles(path)
    if files.name.lower().replace("_", "-") != name.lower().replace("_", "-"):
        raise DriftError(f"{path} is a wheel of {files.name!r}, not {name!r}")
    if not version_matches(files.version, version):
        raise DriftError(f"{path} is {files.name} {files.version}, not {version}")
    return files


def pinned_files(up: PackageUpstream, old_wheel: Path | None, work: Path) -> FileSet:
    """The pinned version's files: ``old_wheel`` when given, else the installation, else its
    wheel downloaded into ``work/old``."""
    if old_wheel is not None:
        return open_wheel(old_wheel, up.name, up.version)
    try:
        installed = Installed().pinned(up)
    except PackageError as exc:
        raise DriftError(f"{exc}; or give the pinned version's wheel with --old-wheel") from None
    return installed or open_wheel(
        download_wheel(up.name, up.version, work / "old"), up.name, up.version
    )


def version_files(name: str, version: str, wheel: Path | None, work: Path) -> WheelFiles:
    """Another version's files: ``wheel`` when given, else downloaded into ``work/new``."""
    return open_wheel(wheel or download_wheel(name, version, work / "new"), name, version)


def read_verified(files: FileSet, path: str) -> tuple[str, bytes] | None:
    """(RECORD hash, bytes) of a verified file, None when the wheel does not ship it."""
    if path not in files.hashes:
        return None
    try:
        return files.read(path)
    except PackageError as exc:
        raise DriftError(str(exc)) from None
