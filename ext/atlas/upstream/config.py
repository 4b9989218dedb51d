"""The upstream feature's settings: where the objects, the book and the snippet cache are, the
size guard of whole-file citations, and what a build does with the lock."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from atlas.settings import OPTIONAL_TEXT, Settings, choice, integer, optional_path, setting


@dataclass(frozen=True)
class UpstreamConfig(Settings):
    upstreams_root: Path | None = setting(
        "atlas_upstreams_root",
        default=None,
        rebuild="env",
        rule=OPTIONAL_TEXT,
        convert=optional_path,
        doc="Folder of extra object stores (NAME.git), searched first; $ATLAS_UPSTREAMS_ROOT "
        "if unset.",
    )
    book_root: Path | None = setting(
        "atlas_book_root",
        default=None,
        rebuild="env",
        rule=OPTIONAL_TEXT,
        convert=optional_path,
        doc="The book's git repository (registry, lock, cache); default: the folder of conf.py.",
    )
    snippets_cache: Path | None = setting(
        "atlas_snippets_cache",
        default=None,
        rebuild="env",
        rule=OPTIONAL_TEXT,
        convert=optional_path,
        doc="The snippet cache; default: snippets_cache/ in the book root.",
    )
    max_lines: int = setting(
        "atlas_upstream_max_lines",
        default=400,
        rebuild="env",
        rule=integer(1),
        doc="Whole-file citations longer than this are refused (cite a range or a symbol).",
    )
    # Not "env": `make check` after `make html` re-reads nothing; lockcheck compares the lock
    # with every citation of the environment at the end of each build.
    lock: Literal["update", "frozen"] = setting(
        "atlas_upstream_lock",
        default="update",
        rebuild="",
        rule=choice("update", "frozen"),
        doc='"update": a build with objects records new citations in upstreams.lock; "frozen": '
        "a citation without a lock entry is an error (release builds).",
    )
