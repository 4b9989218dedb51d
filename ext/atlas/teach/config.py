"""The teaching feature's settings: where labcode quotes from (the repository's address is
atlas.project's ``atlas_repository_url``); and :func:`labkit_root` (atlas.labs', where the
labs' cache key needs it), the one answer to "which labkit folder"."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from atlas.labs.imports import labkit_root
from atlas.settings import OPTIONAL_TEXT, Settings, optional_path, setting


@dataclass(frozen=True)
class TeachConfig(Settings):
    labkit_root: Path | None = setting(
        "atlas_labkit_root",
        default=None,
        rebuild="env",
        rule=OPTIONAL_TEXT,
        convert=optional_path,
        doc="The folder labcode quotes from; None: ext/atlas/labkit (fixture books may point "
        "elsewhere).",
    )


__all__ = ["TeachConfig", "labkit_root"]
