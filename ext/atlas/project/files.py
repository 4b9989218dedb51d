"""The project files the build relies on, checked before anything reads them.

- ``upstreams.lock``: valid JSON of the right shape (a bad merge leaves a stray line);
- ``.gitmodules`` and the gitlinks (the registry of upstreams): git can read the file, every
  entry has a path and a URL, every gitlink has an entry, every entry a gitlink (or a link-only
  pin);
- each ``.bib`` file: pybtex, the parser sphinxcontrib-bibtex uses, can read it (the rules an
  entry must follow are :mod:`atlas.refs`' errors, at their lines);
- the assets the HTML build copies: the npm packages' files (and the versions
  ``package-lock.json`` locks), the static folders of the Python packages.

Each problem is one clean error (:mod:`atlas.project.errors`): file, line when known, what is
wrong, the fix; the build stops with exit status 2.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

from atlas.assets.config import AssetsConfig
from atlas.bookroot import BookPaths, command
from atlas.git.repo import GitmodulesError, gitlinks, gitmodules
from atlas.project.errors import Problem, fail, shown
from atlas.refs.bib import ENTRY_START


# -- upstreams.lock -----------------------------------------------------------------------------
def check_lock(paths: BookPaths) -> list[Problem]:
    from atlas.upstream.lock import LockError, _read

    path = paths.lock_file
    if not path.is_file():
        return []
    try:
        _read(path)
    except LockError as exc:
        fix = (
            f"restore it with `git checkout -- {path.name}`, or rebuild it from the pages with "
            f"`{command(paths, 'lock')}`"
        )
        return [Problem(shown(path), f"not a valid lock ({exc.reason}); {fix}", exc.line)]
    except (OSError, UnicodeDecodeError) as exc:
        return [Problem(shown(path), f"cannot be read ({exc}); restore it from git")]
    return []


# -- .gitmodules and gitlinks -------------------------------------------------------------------
def check_gitmodules(root: Path) -> list[Problem]:
    gitmodules_file = root / ".gitmodules"
    if not gitmodules_file.is_file():
        return []
    where = shown(gitmodules_file)
    restore = "or restore it with `git checkout -- .gitmodules`"
    try:
        entries = gitmodules(root)
    except GitmodulesError as exc:
        line = re.search(r"line (\d+)", exc.said)
        said = exc.said.splitlines()[0] if exc.said else "unreadable"
        said = re.sub(r"^(fatal|error): ", "", said)
        return [
            Problem(
                where,
                f"git cannot read it ({said}); each upstream is a section "
                '[submodule "NAME"] with `path = upstreams/NAME` and `url = ...` lines; fix the '
                f"line, {restore}",
                int(line.group(1)) if line else None,
            )
        ]
    text = gitmodules_file.read_text(encoding="utf-8", errors="replace").splitlines()

    def line_of(name: str) -> int | None:
        head = re.compile(rf'^\s*\[submodule\s+"{re.escape(name)}"\]')
        return next((n for n, line in enumerate(text, 1) if head.match(line)), None)

    problems: list[Problem] = []
    for name, fields in sorted(entries.items()):
        for field in ("path", "url"):
            if not fields.get(field, "").strip():
                problems.append(
                    Problem(
                        where,
                        f'[submodule "{name}"] has no {field}; add `{field} = '
                        f"{'upstreams/' + name if field == 'path' else 'https://github.com/OWNER/REPO'}`"
                        f" under it, {restore}",
                        line_of(name),
                    )
                )
    links = gitlinks(root)
    if links is None:  # not a git repository: nothing pins anything
        return problems
    paths = {fields.get("path", ""): name for name, fields in entries.items()}
    for path, sha in sorted(links.items()):
        if path not in paths:
            problems.append(
                Problem(
                    where,
                    f"the gitlink {path} (pinned at {sha[:12]}) has no entry here; add "
                    f'[submodule "NAME"] with `path = {path}` and its url, or drop the gitlink '
                    f"with `git rm --cached {path}`",
                )
            )
    for name, fields in sorted(entries.items()):
        path = fields.get("path", "")
        link_only = fields.get("atlas-link-only-pin")
        if path and path not in links and not link_only:
            problems.append(
                Problem(
                    where,
                    f'[submodule "{name}"] has no gitlink at {path}, so no pinned commit; pin it '
                    f"with `git update-index --add --cacheinfo 160000,SHA,{path}`, or mark it "
                    "link-only (`atlas-link-only-pin = SHA`)",
                    line_of(name),
                )
            )
    return problems


# -- the bibliography ---------------------------------------------------------------------------
def check_bib(path: Path) -> list[Problem]:
    """Whether pybtex can read ``path`` (strictly, as sphinxcontrib-bibtex does). Keys given
    twice are renamed for this check: they are a rule of atlas.refs, reported at their line."""
    from pybtex.database.input import bibtex
    from pybtex.scanner import PybtexSyntaxError

    where = shown(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [Problem(where, "not found; fix bibtex_bibfiles in conf.py, or create the file")]
    except (OSError, UnicodeDecodeError) as exc:
        return [Problem(where, f"cannot be read ({exc}); save it as UTF-8")]
    starts = list(ENTRY_START.finditer(text))
    seen: dict[str, int] = {}
    pieces, last = [], 0
    for match in starts:
        key = match["key"].lower()
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            pieces += [text[last : match.start("key")], f"{match['key']}-again{seen[key]}"]
            last = match.end("key")
    checked = "".join(pieces) + text[last:]
    import pybtex.errors

    previous = pybtex.errors.strict
    pybtex.errors.set_strict_mode(True)
    try:
        bibtex.Parser().parse_string(checked)
    except PybtexSyntaxError as exc:
        line = getattr(exc, "lineno", None)
        what = str(exc)
        what = re.sub(r"^syntax error in line \d+: ", "", what)
        opened = [m for m in starts if text.count("\n", 0, m.start()) + 1 <= (line or 0)]
        hint = ""
        if opened:
            m = opened[-1] if "premature end" in what or len(opened) < 2 else opened[-2]
            at = text.count("\n", 0, m.start()) + 1
            hint = f" (is the entry '{m['key']}' at line {at} closed with '}}'?)"
        return [Problem(where, f"syntax error: {what}{hint}; fix the entry there", line)]
    except Exception as exc:  # pybtex's other errors: say them, with no traceback
        return [Problem(where, f"pybtex cannot read it: {exc}; fix the entry it names")]
    finally:
        pybtex.errors.set_strict_mode(previous)
    return []


def bib_files(app: Sphinx, config: Config) -> list[Path]:
    return [Path(app.confdir, name) for name in getattr(config, "bibtex_bibfiles", [])]


# -- assets the HTML build copies ---------------------------------------------------------------
NPM_PACKAGES = ("mathjax", "mermaid")
STATIC_PACKAGES = ("furo", "sphinx-design", "sphinx-copybutton")


def check_npm(node_modules: Path, needed: list[str], lockfile: Path) -> list[Problem]:
    setup = "run `npm ci` in the repository root (`make setup` does it)"
    missing = [src for src in needed if not (node_modules / src).exists()]
    if missing:
        return [
            Problem(
                shown(node_modules),
                f"the offline assets {', '.join(missing)} are missing; {setup}",
            )
        ]
    files = [node_modules / s for s in needed if (node_modules / s).is_file()]
    empty = [shown(f) for f in files if not f.stat().st_size]
    if empty:
        return [Problem(shown(node_modules), f"{', '.join(empty)} are empty files; {setup}")]
    problems: list[Problem] = []
    try:
        locked = json.loads(lockfile.read_text(encoding="utf-8")).get("packages", {})
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        return [Problem(shown(lockfile), f"not valid JSON ({exc}); restore it from git")]
    for name in NPM_PACKAGES:
        want = locked.get(f"node_modules/{name}", {}).get("version")
        try:
            have = json.loads((node_modules / name / "package.json").read_text(encoding="utf-8"))
            have = have.get("version")
        except (OSError, ValueError):
            have = None
        if want and have != want:
            problems.append(
                Problem(
                    shown(node_modules / name),
                    f"holds {name} {have or '(no version)'}, but package-lock.json locks {want}; "
                    f"{setup}",
                )
            )
    return problems


def check_static(paths: list[str]) -> list[Problem]:
    """The static folders the HTML build copies (ours, and those of Python packages)."""
    return [
        Problem(
            shown(path),
            "a static folder the HTML build copies is missing (a broken install?); reinstall "
            "with `make setup` (pip install -e '.[dev]')",
        )
        for path in paths
        if not Path(path).is_dir()
    ]


# -- the events ---------------------------------------------------------------------------------
def check_project_files(app: Sphinx, config: Config) -> None:
    """config-inited: the lock, the registry of upstreams and the bibliography, before any of
    them is read."""
    paths = BookPaths.from_app(app)
    problems = check_lock(paths) + check_gitmodules(paths.root)
    for path in bib_files(app, config):
        problems += check_bib(path)
    # the static folders conf.py or -D give (Sphinx would drop a missing one with a warning)
    problems += check_static([str(Path(app.confdir, p)) for p in config.html_static_path])
    fail(problems)


def check_assets(app: Sphinx) -> None:
    """builder-inited, last (HTML builders): the files the build will copy are there, the
    static folders that packages add at builder-inited included."""
    if app.builder.format != "html":
        return
    from atlas.assets import MATHJAX_FILES, MERMAID_FILES

    node_modules = AssetsConfig.of(app).node_modules
    needed = [src for src, _ in MERMAID_FILES + MATHJAX_FILES]
    lockfile = node_modules.parent / "package-lock.json"
    problems = check_npm(node_modules, needed, lockfile)
    problems += check_static([str(Path(app.confdir, p)) for p in app.config.html_static_path])
    fail(problems)
