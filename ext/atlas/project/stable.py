"""A stable configuration: two builds of an unchanged book compare equal configurations.

Sphinx compares the configuration pickled with the environment against the new one, as it is
right after ``config-inited``. Some extensions change values later, at ``builder-inited``
(sphinx-design and sphinx-copybutton append to ``html_static_path``, MyST fills
``mathjax4_config``) and furo registers ``pygments_dark_style`` only when its theme loads; the
pickled configuration then never equals the next build's, and every ``make html`` says "The
configuration has changed (3 options ...)". So the environment is pickled with the
configuration as it stood at the end of ``config-inited``, which is exactly what the next build
compares with: a no-op build reads nothing, writes nothing, and says nothing about the
configuration.
"""

from __future__ import annotations

import copy
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment

_SNAPSHOTS: dict[int, dict[str, Any]] = {}  # id(app) -> Config state at the end of config-inited


def snapshot(app: Sphinx, config: Config) -> None:
    """config-inited, last: remember the configuration the next build will compare with."""
    _SNAPSHOTS[id(app)] = copy.deepcopy(config.__getstate__())


def _stable_config(app: Sphinx) -> Config | None:
    state = _SNAPSHOTS.get(id(app))
    if state is None:
        return None
    stable = Config.__new__(Config)
    stable.__setstate__(copy.deepcopy(state))
    return stable


def before_pickle(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """env-get-updated, last (the environment is pickled right after): pickle the stable
    configuration; :func:`restore` puts the live one back."""
    stable = _stable_config(app)
    if stable is not None and env.config is app.config:
        env.config = stable
    return []


def restore(app: Sphinx, *_: object) -> None:
    """After pickling (consistency check, write, end of build): the live configuration."""
    env = app.env
    if env is not None and env.config is not app.config:
        env.config = app.config


def forget(app: Sphinx, *_: object) -> None:
    restore(app)
    _SNAPSHOTS.pop(id(app), None)
