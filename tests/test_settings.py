"""Typed settings: each feature's ``atlas_*`` settings are one frozen dataclass (atlas.settings).

The rules and conversions are tested on plain values; the checks of atlas.project.config on a
real Sphinx ``Config`` without a build (conf.py and ``-D`` give the same one-line errors); and
one app made from a fixture book shows that Sphinx registers exactly the dataclasses' fields and
that readers get the converted values.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from atlas.assets.config import AssetsConfig
from atlas.history.config import HistoryConfig
from atlas.i18n.config import I18nConfig
from atlas.labs.config import LabsConfig
from atlas.latex.config import LatexConfig
from atlas.project import config as checks
from atlas.project.config import ProjectConfig
from atlas.project.errors import ProjectFileError
from atlas.project.registry import add_settings, registry
from atlas.refs.config import RefsConfig
from atlas.settings import (
    CACHE,
    FLAG,
    TEXTS,
    Invalid,
    Rule,
    Settings,
    choice,
    frozen_mapping,
    integer,
    number,
    optional_path,
    setting,
    texts,
)
from atlas.teach.config import TeachConfig
from atlas.upstream.config import UpstreamConfig
from gitfixtures import FixtureUpstream, make_book, make_repo
from sphinx.config import Config

# Every feature's settings, as the features hand them to atlas.project at setup (a real app's
# registry is compared with this list below).
FEATURES = (
    ProjectConfig,
    AssetsConfig,
    UpstreamConfig,
    LabsConfig,
    RefsConfig,
    LatexConfig,
    TeachConfig,
    I18nConfig,
    HistoryConfig,
)
RULES = {name: rule for cls in FEATURES for name, rule in cls.rules().items()}

REPO = Path(__file__).resolve().parents[1]


# -- rules, on plain values --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "text", "value"),
    [
        (FLAG, "yes", True),
        (FLAG, " Off ", False),
        (integer(), "-3", -3),
        (number(0), "30", 30.0),
        (TEXTS, "myst, upstream,,", ["myst", "upstream"]),
        (Rule("text", optional=True), "None", None),
        (Rule("text", optional=True), "", None),
        (choice("update", "frozen"), "frozen", "frozen"),
    ],
)
def test_a_rule_parses_command_line_text(rule: Rule, text: str, value: Any) -> None:
    parsed = rule.parse(text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize(
    ("rule", "text"),
    [(FLAG, "maybe"), (integer(), "1.5"), (number(), "soon"), (Rule("dict"), "{}")],
)
def test_a_rule_refuses_text_it_cannot_parse(rule: Rule, text: str) -> None:
    with pytest.raises(Invalid):
        rule.parse(text)


@pytest.mark.parametrize(
    ("rule", "good", "bad"),
    [
        (integer(1), [1, 400], [0, -1, 1.0, True, "4"]),
        (number(0, above=True), [1e-9, 60, 60.0], [0, -1, "60", False]),
        (number(0), [0, 2.5], [-0.1]),
        (FLAG, [True, False], [0, 1, "yes"]),
        (choice("auto", "off"), ["auto", "off"], ["force", None]),
        (TEXTS, [[], ["a"], ("a", "b")], ["a", [1], None]),
        (Rule("text", optional=True), [None, "", "x"], [1, Path("x")]),
        (Rule("dict"), [{}, {"a": 1}], [[], None]),
    ],
)
def test_a_rule_checks_type_and_bounds(rule: Rule, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        rule.check(value)
    for value in bad:
        with pytest.raises(Invalid):
            rule.check(value)


def test_what_a_rule_accepts_is_said_in_words() -> None:
    assert choice("update", "frozen").accepted() == "one of 'update', 'frozen'"
    assert number(0, above=True).accepted() == "a number > 0"
    assert integer(1).accepted() == "a whole number >= 1"
    assert integer().accepted() == "a whole number"
    assert Rule("text", optional=True).accepted() == "a text, or None"
    assert TEXTS.accepted() == "a list of texts (-D NAME=a,b)"


def test_sphinx_is_told_the_types_a_rule_accepts() -> None:
    assert integer().types() == (int,)
    assert number().types() == (int, float)
    assert TEXTS.types() == (list, tuple)
    assert Rule("text", optional=True).types() == (str, type(None))
    assert choice("a").types() == (str,)


def test_conversions_give_what_readers_want() -> None:
    assert optional_path(None) is None and optional_path("") is None
    assert optional_path("a/b") == Path("a/b")
    assert texts(["a", "b"]) == ("a", "b")
    frozen = frozen_mapping(source := {"arxiv.org": 3.0})
    source["arxiv.org"] = 0.0  # a copy: the setting's dict may change, the object does not
    assert frozen == {"arxiv.org": 3.0}
    with pytest.raises(TypeError):
        frozen["x"] = 1.0  # type: ignore[index]


def test_a_rule_checks_the_meaning_too() -> None:
    intervals = RefsConfig.rules()["atlas_linkcheck_host_intervals"]
    assert intervals.problem({"arxiv.org": 3}) is None
    assert intervals.problem({"arxiv.org": -1}) == "must map host names to seconds >= 0"
    url = ProjectConfig.rules()["atlas_repository_url"]
    assert url.problem(None) is None and url.problem("https://github.com/o/n") is None
    assert url.problem("https://github.com/o/n/blob/main/").endswith("not a page in it")


# -- the dataclasses ----------------------------------------------------------------------------
class Recorder:
    """Stands in for the Sphinx app in ``register``: the calls it gets."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def add_config_value(self, name: str, default: Any, rebuild: str, **kw: Any) -> None:
        self.calls.append((name, default, rebuild, kw["types"]))


@pytest.mark.parametrize("cls", FEATURES, ids=lambda cls: cls.__name__)
def test_each_dataclass_registers_exactly_its_fields(cls: type[Settings]) -> None:
    app = Recorder()
    cls.register(app)
    specs = [field.metadata["atlas_setting"] for field in dataclasses.fields(cls)]
    assert [call[0] for call in app.calls] == [spec.name for spec in specs]
    assert app.calls == [(s.name, s.default, s.rebuild, s.rule.types()) for s in specs]
    assert all(spec.name.startswith("atlas_") for spec in specs)
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_every_setting_belongs_to_one_feature() -> None:
    names = [name for cls in FEATURES for name in cls.rules()]
    assert len(names) == len(set(names)) == len(RULES) == 29
    assert set(FEATURES) == {
        ProjectConfig,
        AssetsConfig,
        UpstreamConfig,
        LabsConfig,
        RefsConfig,
        LatexConfig,
        TeachConfig,
        I18nConfig,
        HistoryConfig,
    }


@pytest.mark.parametrize("cls", FEATURES, ids=lambda cls: cls.__name__)
def test_the_dataclass_defaults_are_the_registered_defaults_converted(
    cls: type[Settings],
) -> None:
    empty = Config({}, {})
    for _, spec in cls.settings():
        empty.add(spec.name, spec.default, spec.rebuild, spec.rule.types())
    assert cls.from_config(empty) == cls()


def test_an_unloaded_feature_reads_as_its_defaults() -> None:
    """labs read atlas.teach's labkit root, linkcheck atlas.upstream's book root: a book that
    does not load that feature gets its default, as ``getattr(config, NAME, None)`` did."""
    assert TeachConfig.from_config(Config({}, {})).labkit_root is None
    assert UpstreamConfig.from_config(Config({}, {})).book_root is None


def test_the_typed_object_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        LabsConfig().timeout = 1.0  # type: ignore[misc]


def test_of_accepts_whatever_holds_the_configuration_and_builds_once() -> None:
    config = Config({"atlas_labs_seed": 7}, {})
    LabsConfig.register(SimpleNamespace(add_config_value=config.add))
    env = SimpleNamespace(config=config)
    first = LabsConfig.of(SimpleNamespace(config=config, env=env))
    assert first.seed == 7
    assert LabsConfig.of(config) is first and LabsConfig.of(env) is first
    assert CACHE not in config.__getstate__()  # never pickled, never compared


def test_a_field_made_by_setting_carries_its_declaration() -> None:
    @dataclasses.dataclass(frozen=True)
    class Demo(Settings):
        names: tuple[str, ...] = setting(
            "atlas_demo_names", default=["a"], rebuild="env", rule=TEXTS, convert=texts
        )

    assert Demo().names == ("a",)
    assert Demo.rules() == {"atlas_demo_names": TEXTS}


# -- the checks, on a real Config: conf.py and -D give the same one-line errors ----------------
def checked(tmp_path: Path, conf: dict[str, Any], overrides: dict[str, str]) -> Config:
    """conf.py with ``conf`` (one NAME = VALUE a line), checked as a build checks it: ``-D``
    values at setup, then every value at config-inited. Raises ProjectFileError."""
    lines = [f"{name} = {value!r}" for name, value in conf.items()]
    (tmp_path / "conf.py").write_text("project = 'p'\n" + "\n".join(lines) + "\n")
    config = Config(dict(conf), dict(overrides))
    app = SimpleNamespace(config=config, confdir=tmp_path, add_config_value=config.add)
    for cls in FEATURES:
        add_settings(app, cls)
    checks.check_overrides(app)  # type: ignore[arg-type]
    checks.check_settings(app, config)  # type: ignore[arg-type]
    return config


def errors(tmp_path: Path, conf: dict[str, Any], overrides: dict[str, str]) -> list[str]:
    with pytest.raises(ProjectFileError) as stopped:
        checked(tmp_path, conf, overrides)
    assert stopped.value.code == 2
    return [str(problem) for problem in stopped.value.problems]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # conf.py is named as the build names it, relative to here
    return tmp_path


@pytest.mark.parametrize(
    ("name", "value", "text", "in_conf", "on_command_line"),
    [
        (
            "atlas_labs_timeout", -1, "-1",
            "atlas_labs_timeout = -1: must be a number > 0; fix it there",
            "-D atlas_labs_timeout=-1: atlas_labs_timeout must be a number > 0",
        ),
        (
            "atlas_upstream_lock", "maybe", "maybe",
            "atlas_upstream_lock = 'maybe': must be one of 'update', 'frozen'; fix it there",
            "-D atlas_upstream_lock=maybe: atlas_upstream_lock must be one of 'update', 'frozen' "
            "(e.g. -D atlas_upstream_lock=update)",
        ),
        (
            "atlas_repository_branch", "a b", "a b",
            "atlas_repository_branch = 'a b': must be a branch name, such as 'main'; fix it there",
            "-D atlas_repository_branch=a b: must be a branch name, such as 'main'",
        ),
        (
            "atlas_labs_show_times", "yes", "maybe",
            "atlas_labs_show_times = 'yes': must be True or False (-D ...=1 or 0); fix it there",
            "-D atlas_labs_show_times=maybe: atlas_labs_show_times must be True or False "
            "(-D ...=1 or 0)",
        ),
    ],
    ids=["bounds", "choice", "meaning", "flag"],
)  # fmt: skip
def test_a_bad_value_is_one_error_from_conf_py_or_the_command_line(
    in_tmp: Path, name: str, value: Any, text: str, in_conf: str, on_command_line: str
) -> None:
    assert errors(in_tmp, {name: value}, {}) == [f"conf.py:2: ERROR: {in_conf}"]
    assert errors(in_tmp, {}, {name: text}) == [f"command line: ERROR: {on_command_line}"]


def test_a_bad_mapping_in_conf_py(in_tmp: Path) -> None:
    assert errors(in_tmp, {"atlas_linkcheck_host_intervals": {"arxiv.org": -3}}, {}) == [
        "conf.py:2: ERROR: atlas_linkcheck_host_intervals = {'arxiv.org': -3}: must map host "
        "names to seconds >= 0; fix it there"
    ]


def test_a_misspelt_name_is_an_error_with_the_nearest_name(in_tmp: Path) -> None:
    assert errors(in_tmp, {"atlas_lab_seed": 3}, {}) == [
        "conf.py:2: ERROR: atlas_lab_seed: no such setting; did you mean atlas_labs_seed?"
    ]
    assert errors(in_tmp, {}, {"atlas_labs_timout": "9"}) == [
        "command line: ERROR: -D atlas_labs_timout: no such setting; did you mean "
        "atlas_labs_timeout?"
    ]
    assert errors(in_tmp, {}, {"atlas_zzz": "1"}) == [
        "command line: ERROR: -D atlas_zzz: no such setting; remove it"
    ]


def test_the_typed_objects_hold_the_checked_and_converted_values(in_tmp: Path) -> None:
    config = checked(
        in_tmp,
        {"atlas_upstreams_root": "stores", "atlas_linkcheck_host_intervals": {"arxiv.org": 3}},
        {
            "atlas_labs_timeout": "30",
            "atlas_labs_show_times": "0",
            "atlas_strict_allow": "myst,upstream",
            "atlas_labs_mode": "force",
            "atlas_snippets_cache": "None",
        },
    )
    labs = LabsConfig.of(config)
    assert (labs.timeout, labs.show_times, labs.mode) == (30.0, False, "force")
    assert type(labs.timeout) is float
    assert ProjectConfig.of(config).strict_allow == ("myst", "upstream")
    upstream = UpstreamConfig.of(config)
    assert upstream.upstreams_root == Path("stores") and upstream.snippets_cache is None
    assert dict(RefsConfig.of(config).host_intervals) == {"arxiv.org": 3}
    # built at config-inited, once: every feature's object is there before anyone asks
    assert set(config.__dict__[CACHE]) == set(FEATURES)


# -- a real app: Sphinx holds exactly the declared settings -------------------------------------
CONF = """\
import os, runpy
globals().update(
    {k: v for k, v in runpy.run_path(os.environ["ATLAS_BOOK_CONF"]).items() if k[:2] != "__"}
)
bibtex_bibfiles = []
"""


@pytest.mark.usefixtures("fixture_git_config")
def test_a_book_registers_the_dataclasses_and_reads_them_typed(
    make_app: Any, tmp_path: Path
) -> None:
    up = make_repo(tmp_path / "up", [{"a.py": "a = 1\n"}])
    book = make_book(
        tmp_path / "book",
        {"conf.py": CONF, "index.md": "# P\n\nText.\n"},
        {"up": FixtureUpstream(up, pin=up.head, url="https://github.com/fixture/up")},
    )
    app = make_app(
        "html",
        srcdir=book,
        confoverrides={"atlas_labs_timeout": "30", "atlas_upstream_lock": "frozen"},
    )
    registered = {name for name in app.config._options if name.startswith("atlas_")}
    assert registered == set(RULES) == set(registry(app).rules())
    assert registry(app).settings == list(FEATURES)  # handed over by each feature, in order
    assert LabsConfig.of(app).timeout == 30.0 and UpstreamConfig.of(app).lock == "frozen"
    assert LabsConfig.of(app.env) is LabsConfig.of(app)  # the object built at config-inited
    # conf.py's own values, converted
    assert AssetsConfig.of(app).node_modules == REPO / "node_modules"
    assert LatexConfig.of(app).front_matter == ("Front matter",)
