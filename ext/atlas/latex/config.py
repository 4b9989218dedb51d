"""The PDF's settings: which toctree captions are front and back matter."""

from __future__ import annotations

from dataclasses import dataclass

from atlas.settings import TEXTS, Settings, setting, texts


@dataclass(frozen=True)
class LatexConfig(Settings):
    front_matter: tuple[str, ...] = setting(
        "atlas_latex_front_matter",
        default=[],
        rebuild="env",
        rule=TEXTS,
        convert=texts,
        doc="Captions of the root toctrees typeset as unnumbered front matter.",
    )
    back_matter: tuple[str, ...] = setting(
        "atlas_latex_back_matter",
        default=[],
        rebuild="env",
        rule=TEXTS,
        convert=texts,
        doc="Captions of the root toctrees typeset unnumbered after the parts.",
    )
