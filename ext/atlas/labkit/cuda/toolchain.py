"""Where the CUDA compiler and disassembler are: in this environment's pinned wheels, not PATH.

The book promises that ``make html`` works on a machine with Python, git, make and Node alone, so
nvcc, cuobjdump and nvdisasm come from the ``nvidia-cuda-*`` wheels that ``pyproject.toml`` pins.
They are found through each wheel's installed file list (its RECORD), so a system CUDA on PATH,
of another version, can never be picked up by accident. The host compiler (g++, part of the
machine image) is the one exception: nvcc needs it to preprocess, and the CPU model compiles with
it.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROLE = "support"

# distribution -> the executable it installs
WHEELS = {
    "nvcc": "nvidia-cuda-nvcc",
    "cuobjdump": "nvidia-cuda-cuobjdump",
    "nvdisasm": "nvidia-cuda-nvdisasm",
}
HOST_COMPILER = "g++"


class ToolchainError(RuntimeError):
    """A compiler or tool this environment lacks; the message says how to get it."""


@dataclass(frozen=True)
class Toolchain:
    """The executables and their versions (the versions are part of every cache key)."""

    nvcc: Path
    cuobjdump: Path
    nvdisasm: Path
    cxx: Path
    nvcc_version: str
    cxx_version: str


def _installed(distribution: str, executable: str) -> Path:
    try:
        files = importlib.metadata.distribution(distribution).files or []
    except importlib.metadata.PackageNotFoundError:
        raise ToolchainError(
            f"{distribution} is not installed in this environment; run `make setup` "
            "(pyproject.toml pins it)"
        ) from None
    for file in files:
        if file.parts[-2:] == ("bin", executable):
            path = Path(str(file.locate())).resolve()
            if path.exists():
                return path
    raise ToolchainError(f"{distribution} installs no bin/{executable}; reinstall it")


def _first_line(command: list[str], marker: str) -> str:
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return next((line.strip() for line in out.splitlines() if marker in line), out.strip())


@cache
def toolchain() -> Toolchain:
    """The pinned CUDA tools and the host compiler, found once per process."""
    nvcc, cuobjdump, nvdisasm = (
        _installed(WHEELS[n], n) for n in ("nvcc", "cuobjdump", "nvdisasm")
    )
    cxx = shutil.which(HOST_COMPILER)
    if cxx is None:
        raise ToolchainError(f"no host compiler {HOST_COMPILER!r} on PATH (nvcc needs one)")
    return Toolchain(
        nvcc,
        cuobjdump,
        nvdisasm,
        Path(cxx),
        _first_line([str(nvcc), "--version"], "release"),
        _first_line([cxx, "--version"], HOST_COMPILER),
    )
