"""The teaching feature's settings: where labcode quotes from, where the repository is browsable;
and :func:`labkit_root` (atlas.labs', where the labs' cache key needs it), the one answer to
"which labkit folder"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from atlas.labs.imports import labkit_root
from atlas.settings import OPTIONAL_TEXT, Rule, Settings, optional_path, setting


def _web_address(value: str | None) -> str | None:
    return None if value is None or re.match(r"^https?://", value) else "must be an http(s) address"


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
    repository_url: str | None = setting(
        "atlas_repository_url",
        default=None,
        rebuild="env",
        rule=Rule("text", optional=True, meaning=_web_address),
        doc='Where the repository is browsable (".../blob/main/"); the PDF links labcode '
        "captions there.",
    )


__all__ = ["TeachConfig", "labkit_root"]
