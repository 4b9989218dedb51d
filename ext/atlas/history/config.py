"""The history feature's setting: which file lists the translated pages."""

from __future__ import annotations

from dataclasses import dataclass

from atlas.settings import OPTIONAL_TEXT, Settings, setting


@dataclass(frozen=True)
class HistoryConfig(Settings):
    translated_file: str | None = setting(
        "atlas_history_translated",
        default="locales/zh_CN/complete.toml",
        rebuild="env",
        rule=OPTIONAL_TEXT,
        doc="The TOML file (from the book's root) whose ``complete`` list names the pages of the "
        "Chinese edition marked translated; the changelog lists a page on the day it joined. "
        "None: the changelog lists no translations.",
    )


__all__ = ["HistoryConfig"]
