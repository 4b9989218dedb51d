"""Typed settings: each feature's ``atlas_*`` settings are the fields of one frozen dataclass.

Why: a setting's name, default, rebuild kind, rule and meaning are declared once, beside the
feature that reads it, as sphinx-design's ``SdConfig`` and MyST-NB's ``NbParserConfig`` do.
Everything else follows from that one declaration:

- the feature's ``setup()`` registers its settings with Sphinx (:meth:`Settings.register`);
- :mod:`atlas.project.config` checks every value, from ``conf.py`` or ``-D``, by its
  :class:`Rule`, once, before anything reads it, and then builds each feature's object;
- readers take that typed, validated object (``LabsConfig.of(app).timeout``), never
  ``app.config.atlas_*``.

This module imports nothing from Sphinx: the rules are plain data, unit-tested on plain values.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

TRUE, FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}
# Where a Sphinx Config keeps the typed objects built from it. Sphinx leaves names that start
# with "_" out of the pickled configuration, so they are never compared between builds.
CACHE = "_atlas_settings"
KEY = "atlas_setting"  # where a dataclass field keeps its Setting (field metadata)


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
    # A check beyond the type (the value's meaning): the problem with the value, or None.
    meaning: Callable[[Any], str | None] | None = dataclasses.field(default=None, compare=False)

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
        """Raise :class:`Invalid` unless ``value`` has the type and bounds of this rule."""
        if value is None and self.optional:
            return
        ok: bool
        if self.kind == "choice":
            ok = value in self.choices
        elif self.kind in ("int", "number"):
            types: tuple[type, ...] = (int,) if self.kind == "int" else (int, float)
            ok = isinstance(value, types) and not isinstance(value, bool)
            ok = ok and math.isfinite(value)  # inf and nan are no setting's value
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

    def problem(self, value: Any) -> str | None:
        """What is wrong with a value that has the right type (its meaning), or None."""
        return self.meaning(value) if self.meaning is not None else None

    def types(self) -> tuple[type, ...]:
        """The types Sphinx is told the setting takes (its own type check warns on others)."""
        found: tuple[type, ...] = {
            "choice": (str,),
            "int": (int,),
            "number": (int, float),
            "bool": (bool,),
            "text": (str,),
            "list": (list, tuple),
            "dict": (dict,),
        }[self.kind]
        return (*found, type(None)) if self.optional else found


def choice(*names: str) -> Rule:
    return Rule("choice", choices=names)


def integer(minimum: int | None = None, above: bool = False) -> Rule:
    return Rule("int", minimum=minimum, above=above)


def number(minimum: float | None = None, above: bool = False) -> Rule:
    return Rule("number", minimum=minimum, above=above)


FLAG = Rule("bool")
TEXT = Rule("text")
OPTIONAL_TEXT = Rule("text", optional=True)  # a path or address; None: the feature's default
TEXTS = Rule("list")


# -- conversions: the value a setting holds, as its readers want it ---------------------------
def unchanged(value: Any) -> Any:
    return value


def optional_path(value: str | None) -> Path | None:
    """A path setting where None or "" means "the feature's default"."""
    return Path(value) if value else None


def texts(value: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    return tuple(value)


def frozen_mapping(value: dict[str, Any]) -> MappingProxyType[str, Any]:
    """A read-only copy: the typed object is frozen, its values should be too."""
    return MappingProxyType(dict(value))


@dataclass(frozen=True)
class Setting:
    """One ``atlas_*`` setting as Sphinx sees it, and how its value becomes the field's."""

    name: str
    default: Any  # the default Sphinx holds (what conf.py would write)
    rebuild: str  # "env", "html" or "": what a change makes Sphinx redo
    rule: Rule
    doc: str = ""
    convert: Callable[[Any], Any] = unchanged

    def typed(self, value: Any) -> Any:
        return self.convert(value)


def setting(
    name: str,
    *,
    default: Any,
    rebuild: str,
    rule: Rule,
    doc: str = "",
    convert: Callable[[Any], Any] = unchanged,
) -> Any:
    """A dataclass field for the setting ``name`` (use it as the field's default)."""
    spec = Setting(name, default, rebuild, rule, doc, convert)
    return dataclasses.field(default_factory=lambda: spec.typed(default), metadata={KEY: spec})


S = TypeVar("S", bound="Settings")


class Settings:
    """Base of the per-feature settings dataclasses (declare them ``@dataclass(frozen=True)``
    with every field made by :func:`setting`)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    @classmethod
    def settings(cls) -> Iterator[tuple[str, Setting]]:
        """(field name, setting) of each field, in declaration order."""
        for field in dataclasses.fields(cls):
            yield field.name, field.metadata[KEY]

    @classmethod
    def rules(cls) -> dict[str, Rule]:
        """Setting name -> its rule."""
        return {spec.name: spec.rule for _, spec in cls.settings()}

    @classmethod
    def register(cls, app: Any) -> None:
        """In the feature's ``setup()``: tell Sphinx about every setting of this class."""
        for _, spec in cls.settings():
            app.add_config_value(
                spec.name, spec.default, spec.rebuild, types=spec.rule.types(), description=spec.doc
            )

    @classmethod
    def from_config(cls: type[S], config: Any) -> S:
        """The typed object of a Sphinx Config's values. A setting the Config does not hold (its
        feature is not loaded) takes its default."""
        values = {
            field: spec.typed(config[spec.name] if spec.name in config else spec.default)
            for field, spec in cls.settings()
        }
        return cls(**values)

    @classmethod
    def of(cls: type[S], source: Any) -> S:
        """This feature's settings for a Sphinx app, environment, Config, or anything with a
        ``config`` (a directive, a transform, a builder).

        The object built at config-inited, once the values were checked
        (:func:`atlas.project.config.check_settings`); a Config that never went through that
        (the copy pickled with the environment) gets one built from its values on first use.
        """
        config = getattr(source, "config", source)
        cache: dict[type[Settings], Any] = config.__dict__.setdefault(CACHE, {})
        found: S | None = cache.get(cls)
        if found is None:
            found = cache[cls] = cls.from_config(config)
        return found


def remember(config: Any, classes: tuple[type[Settings], ...]) -> None:
    """Build each class's object from ``config`` (its values checked) for :meth:`Settings.of`."""
    config.__dict__[CACHE] = {cls: cls.from_config(config) for cls in classes}
