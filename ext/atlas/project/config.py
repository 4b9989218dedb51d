"""Every ``atlas_*`` setting, checked in one place, before anything uses it.

Each setting has a rule (a choice, a number with its bounds, a flag, a path, a list of text).
A value that breaks its rule, from ``conf.py`` or from ``-D NAME=VALUE``, is one clean error
(see :mod:`atlas.project.errors`) that names where it came from (``conf.py:LINE`` or the
command line) and what would be accepted. ``-D`` values are converted here, by the same rule,
so that ``-D atlas_labs_timeout=30`` works (Sphinx itself can only override text, lists and
integers) and ``-D atlas_labs_show_times=yes`` is an error rather than a crash report. An
``atlas_*`` name that no extension defines is an error too (a typo would be ignored).
Settings that extensions add later without a rule here are checked against the types they
were registered with.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

from atlas.project.errors import Problem, fail, shown

PREFIX = "atlas_"
TRUE, FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


class Invalid(ValueError):
    """A value that breaks its rule; the message says what would be accepted."""


@dataclass(frozen=True)
class Rule:
    """What one setting accepts; ``parse`` turns a ``-D`` text into a value."""

    kind: str  # choice, int, number, bool, text, list, dict
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    above: bool = False  # the minimum itself is excluded
    optional: bool = False  # None is accepted

    def accepted(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind in ("int", "number"):
            noun = "a whole number" if self.kind == "int" else "a number"
            if self.minimum is not None:
                noun += f" {'>' if self.above else '>='} {self.minimum:g}"
            return noun
        return {
            "bool": "True or False (-D ...=1 or 0)",
            "text": "a text",
            "list": "a list of texts (-D NAME=a,b)",
            "dict": "a dict (in conf.py)",
        }[self.kind] + (", or None" if self.optional else "")

    def parse(self, text: str) -> Any:
        """A ``-D`` text as the value it stands for."""
        text = text.strip()
        if self.optional and text.lower() in ("", "none"):
            return None
        if self.kind == "bool":
            if text.lower() in TRUE | FALSE:
                return text.lower() in TRUE
            raise Invalid(text)
        if self.kind == "int":
            try:
                return int(text)
            except ValueError:
                raise Invalid(text) from None
        if self.kind == "number":
            try:
                return float(text)
            except ValueError:
                raise Invalid(text) from None
        if self.kind == "list":
            return [part.strip() for part in text.split(",") if part.strip()]
        if self.kind == "dict":
            raise Invalid(text)
        return text

    def check(self, value: Any) -> None:
        if value is None and self.optional:
            return
        ok: bool
        if self.kind == "choice":
            ok = value in self.choices
        elif self.kind in ("int", "number"):
            types: tuple[type, ...] = (int,) if self.kind == "int" else (int, float)
            ok = isinstance(value, types) and not isinstance(value, bool)
            if ok and self.minimum is not None:
                ok = value > self.minimum if self.above else value >= self.minimum
        elif self.kind == "bool":
            ok = isinstance(value, bool)
        elif self.kind == "text":
            ok = isinstance(value, str)
        elif self.kind == "list":
            ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
        else:
            ok = isinstance(value, dict)
        if not ok:
            raise Invalid(repr(value))


def _choice(*names: str) -> Rule:
    return Rule("choice", choices=names)


def _int(minimum: int | None = None, above: bool = False) -> Rule:
    return Rule("int", minimum=minimum, above=above)


def _number(minimum: float | None = None, above: bool = False) -> Rule:
    return Rule("number", minimum=minimum, above=above)


_TEXT, _PATH = Rule("text"), Rule("text", optional=True)
RULES: dict[str, Rule] = {
    # atlas.project
    "atlas_strict_allow": Rule("list"),
    # atlas.assets
    "atlas_node_modules": _TEXT,
    # atlas.upstream
    "atlas_upstreams_root": _PATH,
    "atlas_book_root": _PATH,
    "atlas_snippets_cache": _PATH,
    "atlas_upstream_max_lines": _int(1),
    "atlas_upstream_lock": _choice("update", "frozen"),
    # atlas.labs
    "atlas_labs_mode": _choice("auto", "force", "off"),
    "atlas_labs_timeout": _number(0, above=True),
    "atlas_labs_memory_limit_mb": _int(0),
    "atlas_labs_seed": _int(),
    "atlas_labs_jobs": _int(0),
    "atlas_labs_show_times": Rule("bool"),
    # atlas.refs (link checking)
    "atlas_linkcheck_cache_days": _number(0),
    "atlas_linkcheck_cache_path": _TEXT,
    "atlas_linkcheck_host_intervals": Rule("dict"),
    "atlas_linkcheck_backoff": _number(0),
    "atlas_linkcheck_host_failures": _int(1),
    "atlas_linkcheck_max_rate_limits": _int(1),
    "atlas_linkcheck_budget_s": _number(0, above=True),
    "atlas_linkcheck_repo": _TEXT,
    # atlas.latex
    "atlas_latex_front_matter": Rule("list"),
    "atlas_latex_back_matter": Rule("list"),
    # atlas.teach
    "atlas_labkit_root": _PATH,
    "atlas_repository_url": _PATH,
}
# Checks beyond the type (the value's meaning): a problem's message, or None.
EXTRA: dict[str, Callable[[Any], str | None]] = {
    "atlas_linkcheck_host_intervals": lambda v: (
        None
        if all(isinstance(k, str) and isinstance(s, (int, float)) and s >= 0 for k, s in v.items())
        else "must map host names to seconds >= 0"
    ),
    "atlas_repository_url": lambda v: (
        None if v is None or re.match(r"^https?://", v) else "must be an http(s) address"
    ),
}


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
        why = EXTRA[name](value) if name in EXTRA else None
    except Invalid:
        why = f"{name} must be {rule.accepted()}"
        if rule.choices:
            why += f" (e.g. -D {name}={rule.choices[0]})"
    return value if not why else None, (
        Problem("command line", f"-D {name}={text}: {why}") if why else None
    )


def check_overrides(app: Sphinx) -> None:
    """At setup, before any extension reads a setting (and before Sphinx converts ``-D``
    values, or warns about names it does not know): every ``-D atlas_*`` by its rule."""
    config = app.config
    problems: list[Problem] = []
    for name, text in list(config._overrides.items()):
        if not name.startswith(PREFIX):
            continue
        rule = RULES.get(name)
        if rule is None:
            near = difflib.get_close_matches(name, list(RULES), n=1)
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
    """config-inited, first: every atlas_* value follows its rule, or the build stops."""
    confdir = Path(app.confdir)
    conf = shown(confdir / "conf.py")
    problems: list[Problem] = []
    known = [name for name in config._options if name.startswith(PREFIX)]
    for name in sorted({n for n in config._raw_config if n.startswith(PREFIX)} - set(known)):
        near = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {near[0]}?" if near else "remove it"
        problems.append(
            Problem(conf, f"{name}: no such setting; {hint}", _conf_line(confdir, name))
        )
    for name in known:
        rule = RULES.get(name) or _registered_rule(config, name)
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
            why = EXTRA[name](value) if name in EXTRA else None
        except Invalid:
            why = f"must be {rule.accepted()}"
        if why:
            where = "command line" if name in config._overrides else conf
            line = None if name in config._overrides else _conf_line(confdir, name)
            problems.append(Problem(where, f"{name} = {value!r}: {why}; fix it there", line))
    fail(problems)
