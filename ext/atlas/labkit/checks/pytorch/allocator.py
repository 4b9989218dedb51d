"""Checks of the labs of ``pytorch/allocator.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

import re

import torch

ROLE = "check"


def header_constants() -> dict[str, int]:
    """The allocator's size constants, read from the C++ header the installed wheel ships."""
    from pathlib import Path

    header = Path(torch.__file__).parent / "include" / "c10" / "core" / "AllocatorConfig.h"
    found = re.findall(r"constexpr size_t (k\w+) = (\d+);", header.read_text())
    return {name: int(value) for name, value in found}
