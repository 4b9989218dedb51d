"""Every ``atlas_*`` setting, checked in one place, before anything uses it.

Each feature declares its settings as one typed dataclass (:mod:`atlas.settings`): name,
default, rebuild and rule (a choice, a number with its bounds, a flag, a path, a list of text)
side by side. This module checks them all against those rules. A value that breaks its rule,
from ``conf.py`` or from ``-D NAME=VALUE``, is one clean error (see :mod:`atlas.project.errors`)
that names where it came from (``conf.py:LINE`` or the command line) and what would be
accepted. ``-D`` values are converted here, by the same rule, so that
``-D atlas_labs_timeout=30`` works (Sphinx itself can only override text, lists and integers)
and ``-D atlas_labs_show_times=yes`` is an error rather than a crash report. An ``atlas_*``
name that no extension defines is an error too (a typo would be ignored). Settings that
extensions add later without a dataclass are checked against the types they were registered
with. Once checked, each feature's typed object is built, for ``XConfig.of(app)``.

The dataclasses are those the features handed over at setup (:mod:`atlas.project.registry`);
this module imports none of them. This project's own settings, ``atlas_strict_allow`` and
the repository's address and branch, are declared here (:class:`ProjectConfig`).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

from atlas.project.errors import Problem, fail, shown
from atlas.project.registry import registry
from atlas.project.repository import address_problem, branch_problem
from atlas.settings import TEXTS, Invalid, Rule, Settings, remember, setting, texts

PREFIX = "atlas_"


@dataclass(frozen=True)
class ProjectConfig(Settings):
    # Read by a logging filter, so changing it re-reads nothing.
    strict_allow: tuple[str, ...] = setting(
        "atlas_strict_allow",
        default=[],
        rebuild="",
        rule=TEXTS,
        convert=texts,
        doc="Warning types a strict build tolerates (`make check` allows upstream.missing).",
    )
    # Where the book's repository lives: every link out of the book is made from these two
    # (atlas.project.repository). Read while writing pages, and by the PDF's captions.
    repository_url: str | None = setting(
        "atlas_repository_url",
        default=None,
        rebuild="env",
        rule=Rule("text", optional=True, meaning=address_problem),
        doc="The repository's address (https://github.com/OWNER/NAME); None: no repository, "
        "edit or report links (the PDF links and the run-at-home steps stay).",
    )
    repository_branch: str = setting(
        "atlas_repository_branch",
        default="main",
        rebuild="env",
        rule=Rule("text", meaning=branch_problem),
        doc="The branch the edit links and the PDF's labcode captions point at.",
    )


def _conf_line(confdir: Path, name: str) -> int | None:
    try:
        lines = (confdir / "conf.py").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    pattern = re.compile(rf"^{re.escape(name)}\s*[:=]")
    return next((n for n, line in enumerate(lines, 1) if pattern.match(line)), None)


def _registered_rule(config: Config, name: str) -> Rule | None:
    """A rule from the types an extension registered (for settings without one here)."""
    types = getattr(config._options[name], "valid_types", ())
    try:
        kinds = set(types)
    except TypeError:
        return None
    optional = type(None) in kinds
    if kinds <= {str, type(None)}:
        return Rule("text", optional=optional)
    if kinds and kinds <= {int, float, type(None)}:
        return Rule("number" if float in kinds else "int", optional=optional)
    if kinds == {bool}:
        return Rule("bool")
    if kinds and kinds <= {list, tuple}:
        return Rule("list")
    return None


def _override_problem(name: str, text: Any, rule: Rule) -> tuple[Any, Problem | None]:
    """The value of ``-D NAME=TEXT`` by its rule, or the problem with it."""
    try:
        value = rule.parse(text) if isinstance(text, str) else text
        rule.check(value)
        why = rule.problem(value)
    except Invalid:
        why = f"{name} must be {rule.accepted()}"
        if rule.choices:
            why += f" (e.g. -D {name}={rule.choices[0]})"
    return value if not why else None, (
        Problem("command line", f"-D {name}={text}: {why}") if why else None
    )


def check_overrides(app: Sphinx) -> None:
    """At the end of setup, once every feature has handed over its settings, before any
    extension reads a setting (and before Sphinx converts ``-D`` values, or warns about names
    it does not know): every ``-D atlas_*`` by its rule."""
    config = app.config
    rules = registry(app).rules()
    problems: list[Problem] = []
    for name, text in list(config._overrides.items()):
        if not name.startswith(PREFIX):
            continue
        rule = rules.get(name)
        if rule is None:
            near = difflib.get_close_matches(name, list(rules), n=1)
            hint = f"did you mean {near[0]}?" if near else "remove it"
            problems.append(Problem("command line", f"-D {name}: no such setting; {hint}"))
            continue
        value, problem = _override_problem(name, text, rule)
        if problem:
            problems.append(problem)
        else:
            config._overrides[name] = value  # converted: Sphinx uses it as it is
    fail(problems)


def check_settings(app: Sphinx, config: Config) -> None:
    """config-inited, first: every atlas_* value follows its rule, or the build stops; then
    the typed objects are built from the checked values."""
    confdir = Path(app.confdir)
    conf = shown(confdir / "conf.py")
    problems: list[Problem] = []
    rules = registry(app).rules()
    known = [name for name in config._options if name.startswith(PREFIX)]
    for name in sorted({n for n in config._raw_config if n.startswith(PREFIX)} - set(known)):
        near = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {near[0]}?" if near else "remove it"
        problems.append(
            Problem(conf, f"{name}: no such setting; {hint}", _conf_line(confdir, name))
        )
    for name in known:
        rule = rules.get(name) or _registered_rule(config, name)
        if rule is None:
            continue
        text = config._overrides.get(name)
        if isinstance(text, str):  # an extension's own setting, given with -D
            value, problem = _override_problem(name, text, rule)
            if problem:
                problems.append(problem)
            else:
                setattr(config, name, value)
            continue
        value = config[name]
        try:
            rule.check(value)
            why = rule.problem(value)
        except Invalid:
            why = f"must be {rule.accepted()}"
        if why:
            where = "command line" if name in config._overrides else conf
            line = None if name in config._overrides else _conf_line(confdir, name)
            problems.append(Problem(where, f"{name} = {value!r}: {why}; fix it there", line))
    fail(problems)
    remember(
        config, tuple(registry(app).settings)
    )  # checked: now each feature's typed object, for XConfig.of(app)
