"""One version of a distribution's files, each read only after its ``RECORD`` hash matched.

A wheel's ``RECORD`` gives a sha256 for every file it ships; checking the bytes against it
makes an installed package (or a downloaded wheel) as trustworthy as a git object. The reads
are the same whichever holds the bytes: an installation (:class:`InstalledFiles`, what the book
quotes) or a wheel file (:class:`WheelFiles`, what drift and bump compare it with). Every way a
file cannot be quoted is one :class:`PackageError` that says why and the fix.
"""

from __future__ import annotations

import base64
import csv
import difflib
import hashlib
import io
import re
import zipfile
from importlib import metadata
from pathlib import Path

SETUP_HINT = "run `make setup`"
# Files that are compiled code in a wheel: out of scope, whatever their content.
COMPILED = (".so", ".pyd", ".dll", ".dylib", ".a", ".lib", ".o", ".pyc", ".pyo", ".exe")


class PackageError(ValueError):
    """One package citation that cannot be quoted; the message says why and the fix."""


def record_digest(data: bytes, mode: str = "sha256") -> str:
    """``sha256=<urlsafe base64, no padding>``, as a wheel's RECORD writes a file's hash."""
    digest = hashlib.new(mode, data).digest()
    return f"{mode}=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class FileSet:
    """The files of one version of a distribution, each read only after its RECORD hash
    matched. Subclasses say where the bytes come from (an installation, a wheel file)."""

    name: str
    version: str
    where: str
    hashes: dict[str, str]  # path in the wheel -> "sha256=..." ("" when RECORD has none)

    def _bytes(self, path: str) -> bytes:
        raise NotImplementedError

    def reinstall_hint(self) -> str:
        return f"download the wheel again ({self.where})"

    def listdir(self, folder: str) -> list[str]:
        """Names directly inside a folder of the wheel (for 'nearest' hints)."""
        prefix = f"{folder}/" if folder else ""
        return sorted(
            {p[len(prefix) :].split("/", 1)[0] for p in self.hashes if p.startswith(prefix)}
        )

    def read(self, path: str) -> tuple[str, bytes]:
        """(RECORD hash, bytes) of a file, verified; PackageError says what is wrong."""
        recorded = self.hashes.get(path)
        label = f"{self.name} {self.version}"
        if recorded is None:
            raise PackageError(self._not_shipped(path))
        if path.endswith(COMPILED):
            raise PackageError(
                f"{path} is compiled code in the {label} wheel; only text files the wheel ships "
                "can be quoted: link to the source in the repository with a plain link instead"
            )
        if not recorded:
            raise PackageError(
                f"{path} has no hash in the RECORD of {label} ({self.where}), so it cannot be "
                "verified; cite another file"
            )
        try:
            data = self._bytes(path)
        except FileNotFoundError:
            raise PackageError(
                f"{path} is listed in the RECORD of {label} but is not on disk ({self.where}): "
                f"the installation is incomplete; {self.reinstall_hint()}"
            ) from None
        mode = recorded.split("=", 1)[0]
        try:
            actual = record_digest(data, mode)
        except ValueError:
            raise PackageError(f"{path}: RECORD uses an unknown hash '{mode}'") from None
        if actual != recorded:
            raise PackageError(
                f"{path} in {label} does not match the wheel's RECORD (recorded {recorded}, "
                f"file {actual}): the installed file was modified ({self.where}); "
                f"{self.reinstall_hint()}"
            )
        return recorded, data

    def _not_shipped(self, path: str) -> str:
        folder, _, base = path.rpartition("/")
        names = self.listdir(folder)
        label = f"{self.name} {self.version}"
        if not names:
            top = ", ".join(self.listdir("")[:8])
            return (
                f"{path} is not in the {label} wheel: it has no folder '{folder}' (top level: "
                f"{top}); give the path inside the wheel, as importing it would find it"
            )
        close = difflib.get_close_matches(base, names, n=4, cutoff=0.5)
        hint = f"; nearest in {folder or 'the top level'}: {', '.join(close)}" if close else ""
        return (
            f"{path} is not in the {label} wheel{hint}. A file that exists only in the "
            "repository (C++ sources, build scripts) is cited with a plain link to its permalink"
        )


def _parse_record(text: str) -> dict[str, str]:
    """Path in the wheel -> recorded hash, for each row of a RECORD (a CSV file)."""
    hashes: dict[str, str] = {}
    for row in csv.reader(io.StringIO(text)):
        if not row or not row[0]:
            continue
        path = row[0].replace("\\", "/")
        if path.startswith("/") or ".." in path.split("/"):
            continue  # scripts installed outside the package folders: never quoted
        hashes[path] = row[1] if len(row) > 1 else ""
    return hashes


class InstalledFiles(FileSet):
    """An installed distribution (importlib.metadata), its RECORD and its files on disk."""

    def __init__(self, dist: metadata.Distribution, name: str) -> None:
        self.dist = dist
        self.name = name
        self.version = dist.version
        self.where = str(dist.locate_file(""))
        record = dist.read_text("RECORD")
        if record is None:
            raise PackageError(
                f"{name} {self.version} at {self.where} has no RECORD (not installed from a "
                f"wheel, or an editable install), so its files cannot be verified; {SETUP_HINT}"
            )
        self.hashes = _parse_record(record)
        self._cache: dict[str, tuple[str, bytes]] = {}

    def reinstall_hint(self) -> str:
        return (
            f"reinstall it: `pip install --force-reinstall --no-deps '{self.name}=={self.version}'`"
            " in the book's environment"
        )

    def _bytes(self, path: str) -> bytes:
        located = Path(str(self.dist.locate_file(path)))
        try:
            return located.read_bytes()
        except IsADirectoryError:
            raise FileNotFoundError(path) from None

    def read(self, path: str) -> tuple[str, bytes]:
        if path not in self._cache:
            if len(self._cache) >= 128:
                self._cache.pop(next(iter(self._cache)))
            self._cache[path] = super().read(path)
        return self._cache[path]


class WheelFiles(FileSet):
    """A wheel file (a zip with ``NAME-VERSION.dist-info/RECORD``), read without installing."""

    def __init__(self, wheel: Path) -> None:
        self.wheel = Path(wheel)
        self.where = str(self.wheel)
        try:
            self.zip = zipfile.ZipFile(self.wheel)
        except (OSError, zipfile.BadZipFile) as exc:
            raise PackageError(f"{wheel} is not a readable wheel: {exc}") from None
        records = [n for n in self.zip.namelist() if re.fullmatch(r"[^/]+\.dist-info/RECORD", n)]
        if len(records) != 1:
            raise PackageError(f"{wheel} holds {len(records)} dist-info RECORD files, not one")
        meta = self.zip.read(records[0].replace("RECORD", "METADATA")).decode("utf-8", "replace")
        fields = dict(
            line.split(": ", 1) for line in meta.splitlines() if ": " in line and line[0] != " "
        )
        self.name = fields.get("Name", "")
        self.version = fields.get("Version", "")
        self.hashes = _parse_record(self.zip.read(records[0]).decode("utf-8"))

    def _bytes(self, path: str) -> bytes:
        try:
            return self.zip.read(path)
        except KeyError:
            raise FileNotFoundError(path) from None

    def close(self) -> None:
        self.zip.close()
