"""The labs' settings: when they run, their limits, their seed, the workers, shown times, and
whether a ``check`` lab must assert (atlas.labs.kinds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from atlas.settings import FLAG, Settings, choice, integer, number, setting


@dataclass(frozen=True)
class LabsConfig(Settings):
    # No rebuild on a mode change: env-updated returns the pages whose results changed.
    mode: Literal["auto", "force", "off"] = setting(
        "atlas_labs_mode",
        default="auto",
        rebuild="",
        rule=choice("auto", "force", "off"),
        doc='"auto": run what the cache lacks; "force": run every lab; "off": run none.',
    )
    timeout: float = setting(
        "atlas_labs_timeout",
        default=60.0,
        rebuild="env",
        rule=number(0, above=True),
        convert=float,
        doc="Seconds per lab, unless the lab sets :timeout:.",
    )
    memory_limit_mb: int = setting(
        "atlas_labs_memory_limit_mb",
        default=8192,
        rebuild="env",
        rule=integer(0),
        doc="Address-space cap of a page's worker (RLIMIT_AS), in MiB; 0: none.",
    )
    seed: int = setting(
        "atlas_labs_seed", default=0, rebuild="env", rule=integer(), doc="Seed of every lab's RNGs."
    )
    jobs: int = setting(
        "atlas_labs_jobs",
        default=0,
        rebuild="",
        rule=integer(0),
        doc="Workers that run pages side by side; 0: the -j of the build.",
    )
    # Times differ from run to run: a build that must be byte-for-byte reproducible from a cold
    # cache turns them off (with a warm cache the cached times are shown, which is stable).
    show_times: bool = setting(
        "atlas_labs_show_times",
        default=True,
        rebuild="html",
        rule=FLAG,
        doc="Show each lab's run time on its page and in the labs report.",
    )
    # Off only in the fixture books that test the runner itself (a crash, a hang, a cap), whose
    # labs check nothing by design; the book keeps the default.
    checks_must_assert: bool = setting(
        "atlas_labs_checks_must_assert",
        default=True,
        rebuild="env",
        rule=FLAG,
        doc='A ":kind: check" lab (the default) whose examples assert nothing is an error.',
    )
