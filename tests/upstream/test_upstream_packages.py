"""Package upstreams: a fake wheel, built here and installed with pip into a temporary target
folder (no network), quoted by fixture books; broken installs fail at their page and line."""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from atlas.code.select import line_count
from atlas.upstream.lock import load_lock
from atlas.upstream.packages.files import FileSet, WheelFiles, record_digest
from atlas.upstream.packages.installed import Installed
from atlas.upstream.packages.links import verify_link
from atlas.upstream.packages.registry import PackageRegistryError, PackageUpstream, load_packages
from gitfixtures import FixtureUpstream, make_book
from upstream_demo import upstream_book

ROOTS = Path(__file__).resolve().parents[1] / "roots"
NAME = "fakepkg"
REPO_URL = "https://github.com/fixture/fakepkg"

CORE_V1 = '''\
"""Fixture package for package upstreams."""


def add(a, b):
    """Sum."""
    return a + b


def mul(a, b):
    return a * b


CONSTANT = 3
'''
# 1.1.0: two lines inserted above add (which only moves), mul changed, CONSTANT moved
CORE_V2 = CORE_V1.replace('upstreams."""\n', 'upstreams."""\n\nimport math\n').replace(
    "return a * b", "return math.prod((a, b))"
)
UTIL = "def helper():\n    return 1\n"

PYPROJECT = f"""\
[project]
name = "fixture-book"
version = "0"
dependencies = ["{NAME}==1.0.0", "other>=1"]

[tool.atlas.upstream-packages.{NAME}]
repository = "{REPO_URL}"
tag = "v{{version}}"
paths = {{ "{NAME}/" = "src/{NAME}/" }}
"""


# -- the fake wheel -----------------------------------------------------------------------------
def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(folder: Path, version: str, core: str) -> Path:
    """A pure wheel of ``fakepkg`` with a RECORD, as a build backend writes it."""
    info = f"{NAME}-{version}.dist-info"
    files = {
        f"{NAME}/__init__.py": b"from .core import add\n",
        f"{NAME}/core.py": core.encode(),
        f"{NAME}/util.py": UTIL.encode(),
        f"{NAME}/_native.so": b"\x7fELF\x00\x00binary",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = "".join(f"{p},{_digest(d)},{len(d)}\n" for p, d in files.items())
    record += f"{info}/RECORD,,\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{NAME}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
        zf.writestr(f"{info}/RECORD", record)
    return wheel


def pip_install(wheel: Path, target: Path) -> Path:
    """Install a wheel into a target folder with pip itself (no index, no network)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--isolated", "--no-index", "--no-deps",
         "--no-compile", "--quiet", "--target", str(target), str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    return target


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("wheels")
    return {
        "1.0.0": build_wheel(folder, "1.0.0", CORE_V1),
        "1.1.0": build_wheel(folder, "1.1.0", CORE_V2),
    }


@pytest.fixture(scope="module")
def installed(wheels, tmp_path_factory) -> dict[str, Path]:
    """Each version installed once; tests that break an installation copy it first."""
    return {v: pip_install(w, tmp_path_factory.mktemp(f"site-{v}")) for v, w in wheels.items()}


def site_copy(installed: dict[str, Path], version: str, tmp_path: Path) -> Path:
    target = tmp_path / f"site-{version}"
    shutil.copytree(installed[version], target)
    return target


# -- fixture books built with Sphinx --------------------------------------------------------------
GOOD = f"""\
# Package citations

```{{upstream}} {NAME} {NAME}/core.py::add
```

```{{upstream}} {NAME}@1.0.0 {NAME}/core.py:9-10
:contains: return a * b
```

The constant is {{upstream}}`{NAME} {NAME}/core.py:13`, the helper
{{upstream}}`{NAME} {NAME}/util.py::helper`.
"""

_LIVE: list = []


def book(tmp_path: Path, page: str) -> Path:
    return upstream_book(tmp_path / "book", {"index.md": page, "pyproject.toml": PYPROJECT})


def build(make_app, root: Path, monkeypatch, site: Path | None, **overrides):
    """Build the fixture book with ``site`` as the only place packages are installed."""
    while _LIVE:
        _LIVE.pop().cleanup()
    monkeypatch.setenv("ATLAS_PACKAGE_PATH", str(site or root / "nothing-installed"))
    conf = {"atlas_upstreams_root": str(root / "no-stores"), **overrides}
    app = make_app("html", srcdir=root, freshenv=True, confoverrides=conf)
    _LIVE.append(app)
    app.build()
    return app


def problems(app) -> list[str]:
    text = re.sub(r"\x1b\[[0-9;]*m", "", app.warning.getvalue())
    return [
        line
        for line in text.splitlines()
        if re.search(r"(WARNING|ERROR):", line) and "[upstream.summary]" not in line
    ]


def errors_by_line(app) -> dict[int, str]:
    found: dict[int, str] = {}
    for line in problems(app):
        match = re.search(r"index\.md:(\d+): ERROR: (.*)$", line)
        assert match, f"not an error at a page line: {line}"
        assert int(match.group(1)) not in found, f"two errors at line {match.group(1)}"
        found[int(match.group(1))] = match.group(2)
    return found


def test_good_citations_render_from_the_installed_files(
    make_app, tmp_path, installed, monkeypatch
) -> None:
    root = book(tmp_path, GOOD)
    app = build(make_app, root, monkeypatch, installed["1.0.0"])
    assert problems(app) == [] and app.statuscode == 0
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "fakepkg&#64;1.0.0 · fakepkg/core.py · L4–L6" in html
    # permalinks at the tag, the wheel path mapped to the repository path
    assert f"{REPO_URL}/blob/v1.0.0/src/fakepkg/core.py#L4-L6" in html
    assert f"{REPO_URL}/blob/v1.0.0/src/fakepkg/core.py#L13" in html
    assert f"{REPO_URL}/blob/v1.0.0/src/fakepkg/util.py#L1-L2" in html
    # the inline role on a symbol reads path::symbol; its lines are in the permalink (above)
    assert "fakepkg/util.py::helper</span>" in html
    # the lock: keyed by version, blob = the RECORD hash of the file
    lock = load_lock(root)
    entry = lock[f"{NAME}@1.0.0 {NAME}/core.py::add"]
    assert entry.blob == record_digest(CORE_V1.encode()) == _digest(CORE_V1.encode())
    assert f"{NAME}@1.0.0 {NAME}/core.py:9-10" in lock  # (:contains: only guards)
    assert len(lock) == 4


BROKEN = f"""\
# Broken

```{{upstream}} {NAME} {NAME}/core.py::add
```

```{{upstream}} {NAME} {NAME}/util.py::helper
```

```{{upstream}} {NAME} {NAME}/utils.py
```

```{{upstream}} {NAME} {NAME}/_native.so
```

```{{upstream}} {NAME}@0.9.0 {NAME}/__init__.py
```

```{{upstream}} {NAME} {NAME}/__init__.py
```
"""


def test_a_modified_missing_unshipped_or_compiled_file_is_one_error_at_its_line(
    make_app, tmp_path, installed, monkeypatch
) -> None:
    site = site_copy(installed, "1.0.0", tmp_path)
    (site / NAME / "core.py").write_text(CORE_V1.replace("a + b", "b + a"), encoding="utf-8")
    (site / NAME / "util.py").unlink()
    root = book(tmp_path, BROKEN)
    app = build(make_app, root, monkeypatch, site)
    assert app.statuscode == 1
    found = errors_by_line(app)
    assert sorted(found) == [3, 6, 9, 12, 15]  # line 18 (an intact file) is fine
    assert "does not match the wheel's RECORD" in found[3]
    assert "pip install --force-reinstall --no-deps 'fakepkg==1.0.0'" in found[3]
    assert "listed in the RECORD of fakepkg 1.0.0 but is not on disk" in found[6]
    assert "is not in the fakepkg 1.0.0 wheel; nearest in fakepkg: util.py" in found[9]
    assert "compiled code" in found[12]
    assert "the book pins fakepkg==1.0.0" in found[15] and "drop '@0.9.0'" in found[15]
    assert all(m.endswith("[upstream.error]") for m in found.values())
    assert list(load_lock(root)) == [f"{NAME}@1.0.0 {NAME}/__init__.py"]  # nothing wrong locked


def test_a_different_installed_version_is_an_error_at_each_citation(
    make_app, tmp_path, installed, monkeypatch
) -> None:
    root = book(tmp_path, GOOD)
    app = build(make_app, root, monkeypatch, installed["1.1.0"])
    found = errors_by_line(app)
    assert sorted(found) == [3, 6, 10, 11]
    for message in found.values():
        assert "fakepkg 1.1.0 is installed" in message
        assert "the book pins fakepkg==1.0.0 (pyproject.toml)" in message
        assert "make setup" in message
    assert app.statuscode == 1


def test_not_installed_is_a_placeholder_or_the_cached_snippet(
    make_app, tmp_path, installed, monkeypatch
) -> None:
    root = book(tmp_path, GOOD)
    build(make_app, root, monkeypatch, installed["1.0.0"])  # locks and caches
    app = build(make_app, root, monkeypatch, None)  # not installed, cache present
    assert problems(app) == []
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "Sum." in html and "not available" not in html

    shutil.rmtree(root / "snippets_cache")
    app = build(make_app, root, monkeypatch, None)
    warnings = problems(app)
    assert len(warnings) == 4 and app.statuscode == 0
    assert all("[upstream.missing]" in w and "Run `make setup`" in w for w in warnings)
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert html.count("Upstream code not available in this build") == 2
    assert "the package fakepkg==1.0.0 is not installed here" in html
    assert f"{REPO_URL}/blob/v1.0.0/src/fakepkg/core.py#L9-L10" in html
    assert '<span class="pre">make</span> <span class="pre">setup</span>' in html

    # a citation the lock never saw cannot be shown from nothing: an error, not a traceback
    (root / "index.md").write_text(f"# P\n\n```{{upstream}} {NAME} {NAME}/core.py::mul\n```\n")
    app = build(make_app, root, monkeypatch, None)
    assert "never checked against the real files" in errors_by_line(app)[3]


# -- check, lock, the link checker, without Sphinx ----------------------------------------------
CHECK_PAGE = f"""\
# Page

```{{upstream}} demo pkg/net.py:8-9
```

```{{upstream}} {NAME} {NAME}/core.py::add
```

See {{upstream}}`{NAME} {NAME}/core.py:13`.
"""


def check_book(tmp_path: Path, demo, page: str = CHECK_PAGE) -> Path:
    conf = (ROOTS / "test-upstream" / "conf.py").read_text(encoding="utf-8")
    return make_book(
        tmp_path / "cbook",
        {"source/page.md": page, "conf.py": conf, "pyproject.toml": PYPROJECT},
        {"demo": FixtureUpstream(demo, pin=demo.head)},
    )


def run_check(capsys, *argv: str) -> tuple[int, str]:
    from atlas.upstream.check import main

    code = main(list(argv))
    return code, capsys.readouterr().out


def test_check_and_lock_list_packages_with_git_upstreams(
    capsys, tmp_path, demo, stores, installed, monkeypatch
) -> None:
    root = check_book(tmp_path, demo)
    monkeypatch.setenv("ATLAS_PACKAGE_PATH", str(installed["1.0.0"]))
    args = ("--root", str(root), "--stores", str(stores))
    code, out = run_check(capsys, "lock", *args)
    assert code == 0 and "3 entries (3 added" in out
    lock = load_lock(root)
    assert lock[f"{NAME}@1.0.0 {NAME}/core.py::add"].blob == _digest(CORE_V1.encode())
    assert lock[f"{NAME}@1.0.0 {NAME}/core.py:13"].blob == _digest(CORE_V1.encode())
    code, out = run_check(capsys, "check", *args)
    assert code == 0
    rows = [line.split() for line in out.splitlines() if line.startswith("source/")]
    assert [(r[1], r[2], r[-1]) for r in rows] == [
        ("3", "demo", "ok"), ("6", NAME, "ok"), ("9", NAME, "ok"),
    ]  # fmt: skip
    assert re.search(r"fakepkg==1\.0\.0\s+installed 1\.0\.0 \(", out)
    assert f"permalinks at {REPO_URL}/tree/v1.0.0" in out

    # a modified installed file: check fails at its row, with the fix
    site = site_copy(installed, "1.0.0", tmp_path)
    (site / NAME / "core.py").write_text(CORE_V1 + "# edited\n", encoding="utf-8")
    monkeypatch.setenv("ATLAS_PACKAGE_PATH", str(site))
    code, out = run_check(capsys, "check", *args)
    assert code == 1
    assert out.count("does not match the wheel's RECORD") == 2

    # not installed: the snippets cache stands in (as for absent git objects); without it the
    # rows say missing (a placeholder in a build), and --strict fails on them
    monkeypatch.setenv("ATLAS_PACKAGE_PATH", str(tmp_path / "empty"))
    code, out = run_check(capsys, "check", *args)
    assert code == 0 and "missing" not in out.split("package upstreams")[0]
    shutil.rmtree(root / "snippets_cache")
    code, out = run_check(capsys, "check", *args)
    assert code == 0 and out.count("missing") >= 2 and "not installed: run `make setup`" in out
    assert run_check(capsys, "check", "--strict", *args)[0] == 1


def test_the_link_checker_answers_tag_links_from_installed_files(
    tmp_path, installed, monkeypatch
) -> None:
    from atlas.refs.github import Verifier

    root = tmp_path / "r"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    here = Installed([str(installed["1.0.0"])])
    base = f"{REPO_URL}/blob/v1.0.0/src/fakepkg"
    assert verify_link(root, f"{base}/core.py#L4-L6", here) == (
        True, "src/fakepkg/core.py has lines 4-6 at fakepkg 1.0.0 (tag v1.0.0) (13 lines, "
        "RECORD verified)",
    )  # fmt: skip
    ok, message = verify_link(root, f"{base}/core.py#L10-L40", here)
    assert ok is False and "has 13 lines" in message
    assert verify_link(root, f"{base}/util.py", here)[0] is True
    assert verify_link(root, f"{REPO_URL}/tree/v1.0.0/src/fakepkg", here)[0] is True
    # what the installed files cannot say is left to the online check
    assert verify_link(root, f"{REPO_URL}/blob/v1.0.0/csrc/kernel.cu#L1", here)[0] is None
    assert verify_link(root, f"{REPO_URL}/blob/v0.9.0/src/fakepkg/core.py#L1", here)[0] is None
    assert verify_link(root, "https://github.com/other/repo/blob/v1.0.0/a.py", here) is None
    # through the link checker's verifier, as `make linkcheck` asks it
    monkeypatch.setenv("ATLAS_PACKAGE_PATH", str(installed["1.0.0"]))
    from atlas.upstream.packages import links

    links._MEMO.clear()
    verdict = Verifier(root).verify(f"{base}/core.py#L13")
    assert verdict is not None and verdict.ok is True


class MemoryFiles(FileSet):
    """A version's files held in memory, with the RECORD hashes a wheel would give them."""

    def __init__(self, version: str, files: dict[str, bytes]) -> None:
        self.name, self.version, self.where = NAME, version, "memory"
        self.files = files
        self.hashes = {path: record_digest(data) for path, data in files.items()}

    def _bytes(self, path: str) -> bytes:
        return self.files[path]


class InstalledHere(Installed):
    """What is installed, given as one FileSet instead of looked up on a path."""

    def __init__(self, files: FileSet) -> None:
        super().__init__([])
        self.files = files

    def get(self, up: PackageUpstream) -> FileSet:
        return self.files


def test_verify_link_accepts_exactly_the_permalinks_built_for_the_package_tag(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    up = load_packages(tmp_path)[NAME]
    files = {
        f"{NAME}/core.py": CORE_V1.encode(),
        f"{NAME}/no final newline.py": b"a = 1\r\nb = 2\r\nc = 3",  # quoted by build
        f"{NAME}/caf\u00e9 #2.py": "x = '\u00e9'\n".encode(),  # ditto: %C3%A9 and %23
    }
    here = InstalledHere(MemoryFiles("1.0.0", files))
    for path, data in files.items():
        total = line_count(data)
        built = [up.permalink("1.0.0", path)]
        built += [
            up.permalink("1.0.0", path, (start, end))
            for start in range(1, total + 1)
            for end in range(start, total + 1)
        ]
        assert "/blob/v1.0.0/src/fakepkg/" in built[-1]
        for link in built:
            ok, message = verify_link(tmp_path, link, here)
            assert ok is True, (link, message)
            assert message.startswith(f"{up.repo_path(path)} "), message
        # and nothing beyond them: a line past the end, or another version's tag
        past = up.permalink("1.0.0", path, (total, total + 1))
        assert verify_link(tmp_path, past, here) == (
            False,
            f"{up.repo_path(path)} has {total} lines at fakepkg 1.0.0 (tag v1.0.0); "
            f"the link cites L{total}-L{total + 1}",
        )
        ok, message = verify_link(tmp_path, up.permalink("0.9.0", path, (1, 1)), here)
        assert ok is None and "is not fakepkg's pinned tag v1.0.0" in message
    assert line_count(files[f"{NAME}/no final newline.py"]) == 3


# -- the registry ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("deps", "table", "message"),
    [
        ('["fakepkg>=1.0"]', f'repository = "{REPO_URL}"', "is not pinned exactly"),
        ('["other==1"]', f'repository = "{REPO_URL}"', "is not in [project] dependencies"),
        ('["fakepkg==1.0"]', 'repository = "fixture/fakepkg"', "repository must be"),
        ('["fakepkg==1.0"]', f'repository = "{REPO_URL}"\ntag = "v1"', "tag must be a template"),
        ('["fakepkg==1.0"]', f'repository = "{REPO_URL}"\nbranch = "x"', "unknown key(s) branch"),
    ],
)
def test_a_wrong_registry_entry_says_where_and_how(tmp_path, deps, table, message) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f"[project]\ndependencies = {deps}\n\n[tool.atlas.upstream-packages.fakepkg]\n{table}\n"
    )
    with pytest.raises(PackageRegistryError, match=re.escape(message)):
        load_packages(tmp_path)


def test_the_registry_reads_the_pin_from_dependencies(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    up = load_packages(tmp_path)[NAME]
    assert (up.version, up.tag(), up.requirement) == ("1.0.0", "v1.0.0", "fakepkg==1.0.0")
    assert up.repo_path("fakepkg/core.py") == "src/fakepkg/core.py"
    assert up.wheel_paths("src/fakepkg/core.py") == ["fakepkg/core.py", "src/fakepkg/core.py"]
    assert up.permalink("1.0.0", "fakepkg/core.py", (4, 6)).endswith(
        "/blob/v1.0.0/src/fakepkg/core.py#L4-L6"
    )


def test_the_real_book_declares_torch_and_triton(repo_root) -> None:
    found = load_packages(repo_root)
    assert found["torch"].requirement == "torch==2.13.0"
    assert found["torch"].permalink("2.13.0", "torch/utils/checkpoint.py", (10, 40)) == (
        "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/utils/checkpoint.py#L10-L40"
    )
    assert found["triton"].permalink("3.7.1", "triton/language/standard.py") == (
        "https://github.com/triton-lang/triton/blob/v3.7.1/python/triton/language/standard.py"
    )


# -- drift and bump: two versions' wheels -------------------------------------------------------
def test_bump_carries_citations_to_the_new_wheel_and_moves_the_pin(
    capsys, tmp_path, demo, wheels, installed, monkeypatch
) -> None:
    from atlas.upstream.drift import main as drift_main

    page = GOOD.replace("# Package citations", "# P")
    root = check_book(tmp_path, demo, page)
    monkeypatch.setenv("ATLAS_PACKAGE_PATH", str(installed["1.0.0"]))
    assert run_check(capsys, "lock", "--root", str(root))[0] == 0
    args = [NAME, "1.1.0", "--wheel", str(wheels["1.1.0"]), "--root", str(root)]
    assert drift_main(["drift", *args]) == 0
    out = capsys.readouterr().out
    assert "fakepkg: 1.0.0 -> 1.1.0" in out
    assert "summary: 1 unchanged, 2 moved, 1 changed, 0 gone" in out
    assert "+    return math.prod((a, b))" in out
    assert drift_main(["bump", *args]) == 0
    capsys.readouterr()
    text = (root / "source/page.md").read_text(encoding="utf-8")
    assert f"```{{upstream}} {NAME} {NAME}/core.py::add\n" in text  # a symbol stays as written
    assert f"```{{upstream}} {NAME}@1.0.0 {NAME}/core.py:9-10\n" in text  # changed: left behind
    assert f"{{upstream}}`{NAME} {NAME}/core.py:15`" in text  # moved by the two new lines
    assert f"{{upstream}}`{NAME} {NAME}/util.py::helper`" in text
    assert f'"{NAME}==1.1.0"' in (root / "pyproject.toml").read_text(encoding="utf-8")
    lock = load_lock(root)
    assert lock[f"{NAME}@1.1.0 {NAME}/core.py::add"].blob == _digest(CORE_V2.encode())
    assert lock[f"{NAME}@1.1.0 {NAME}/core.py:15"].blob == _digest(CORE_V2.encode())
    assert f"{NAME}@1.0.0 {NAME}/core.py::add" not in lock
    # with 1.1.0 installed, every carried citation checks out; the left-behind one fails
    monkeypatch.setenv("ATLAS_PACKAGE_PATH", str(installed["1.1.0"]))
    code, out = run_check(capsys, "check", "--root", str(root))
    assert code == 1
    statuses = [line.split()[-1] for line in out.splitlines() if line.startswith("source/")]
    assert statuses == ["ok", "error", "ok", "ok"]


def test_wheel_files_are_verified_against_their_own_record(tmp_path, wheels) -> None:
    files = WheelFiles(wheels["1.0.0"])
    assert (files.name, files.version) == (NAME, "1.0.0")
    assert files.read(f"{NAME}/core.py")[1] == CORE_V1.encode()
    broken = tmp_path / "broken.whl"
    with zipfile.ZipFile(wheels["1.0.0"]) as src, zipfile.ZipFile(broken, "w") as dst:
        for item in src.namelist():
            data = src.read(item)
            dst.writestr(
                item, data.replace(b"a + b", b"a - b") if item.endswith("core.py") else data
            )
    from atlas.upstream.packages.files import PackageError

    with pytest.raises(PackageError, match="does not match the wheel's RECORD"):
        WheelFiles(broken).read(f"{NAME}/core.py")
