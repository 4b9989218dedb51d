"""The teaching feature's settings: where labcode quotes from, where the repository is browsable;
and :func:`labkit_root`, the one answer to "which labkit folder" for labcode, the teaching check,
the runnable files and the labs' cache key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def labkit_root(source: Any) -> Path:
    """The labkit folder of this build: ``atlas_labkit_root`` when set, else ``ext/atlas/labkit``.

    ``source`` is the app, its environment or anything :meth:`Settings.of` takes. Labs read the
    setting too (their cache key follows the files a page's labs import), and get the default
    when atlas.teach is not loaded.
    """
    # Here, not at the top: atlas.labs imports this module, and importing it loads atlas.labs.
    from atlas.labs.imports import LABKIT

    configured = TeachConfig.of(source).labkit_root
    return configured.resolve() if configured else LABKIT
