"""The offline assets' setting: the node_modules folder they are copied from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from atlas.settings import TEXT, Settings, setting


@dataclass(frozen=True)
class AssetsConfig(Settings):
    node_modules: Path = setting(
        "atlas_node_modules",
        default="node_modules",
        rebuild="env",
        rule=TEXT,
        convert=Path,
        doc="The npm folder that holds mermaid and MathJax (`npm ci` fills it).",
    )
