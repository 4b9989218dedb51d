"""The link check's settings: its cache, pacing, back-off, breaker, budget and repository."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas.settings import (
    TEXT,
    Rule,
    Settings,
    frozen_mapping,
    integer,
    number,
    optional_path,
    setting,
)


def _seconds_per_host(value: dict[Any, Any]) -> str | None:
    if all(isinstance(k, str) and isinstance(s, (int, float)) and s >= 0 for k, s in value.items()):
        return None
    return "must map host names to seconds >= 0"


@dataclass(frozen=True)
class RefsConfig(Settings):
    cache_days: float = setting(
        "atlas_linkcheck_cache_days",
        default=1.0,
        rebuild="",
        rule=number(0),
        convert=float,
        doc="Days a link-check answer is reused without asking the host again (0: never).",
    )
    cache_path: Path | None = setting(
        "atlas_linkcheck_cache_path",
        default="",
        rebuild="",
        rule=TEXT,
        convert=optional_path,
        doc='Where the cache lives ("": _build/linkcheck/cache.json).',
    )
    host_intervals: Mapping[str, float] = setting(
        "atlas_linkcheck_host_intervals",
        default={},
        rebuild="",
        rule=Rule("dict", meaning=_seconds_per_host),
        convert=frozen_mapping,
        doc="Minimum seconds between two requests to a host (and its subdomains).",
    )
    backoff: float = setting(
        "atlas_linkcheck_backoff",
        default=2.0,
        rebuild="",
        rule=number(0),
        convert=float,
        doc="First back-off between attempts of one link, doubled each time "
        "(linkcheck_retries attempts).",
    )
    host_failures: int = setting(
        "atlas_linkcheck_host_failures",
        default=3,
        rebuild="",
        rule=integer(1),
        doc="Connection failures in a row after which a host's other links are not requested.",
    )
    max_rate_limits: int = setting(
        "atlas_linkcheck_max_rate_limits",
        default=5,
        rebuild="",
        rule=integer(1),
        doc="429 answers for one link after which it is reported rate-limited, not retried.",
    )
    budget_s: float = setting(
        "atlas_linkcheck_budget_s",
        default=900.0,
        rebuild="",
        rule=number(0, above=True),
        convert=float,
        doc="Seconds after which the link check sends no more requests (the rest: unreachable).",
    )
    repo: Path | None = setting(
        "atlas_linkcheck_repo",
        default="",
        rebuild="",
        rule=TEXT,
        convert=optional_path,
        doc='The git repository whose .gitmodules registers the upstreams ("": '
        "atlas_book_root, else the conf.py folder).",
    )
