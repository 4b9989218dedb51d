"""The project files the build relies on, checked before anything reads them.

The features hand over the checks of the files they own (:mod:`atlas.project.registry`:
upstream the lock, refs the ``.bib`` files, assets the npm packages); this module runs them,
with its own two:

- ``.gitmodules`` and the gitlinks (the book's registry of upstreams): git can read the file,
  every entry has a path and a URL, every gitlink has an entry, every entry a gitlink (or a
  link-only pin);
- the static folders the HTML build copies (ours, and those of Python packages).

Each problem is one clean error (:mod:`atlas.project.errors`): file, line when known, what is
wrong, the fix; the build stops with exit status 2.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

from atlas.bookroot import BookPaths
from atlas.git.repo import GitmodulesError, gitlinks, gitmodules
from atlas.project.errors import Problem, fail, shown
from atlas.project.registry import add_check, run_checks


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


# -- static folders -----------------------------------------------------------------------------
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
# The order of each event's errors: the lock (upstream), .gitmodules, the .bib files (refs), the
# static folders; at builder-inited, the npm packages (assets), then the static folders.
ORDER = {"lock": 10, "gitmodules": 20, "bib": 30, "static": 40, "npm": 10}


def _gitmodules(app: Sphinx) -> list[Problem]:
    return check_gitmodules(BookPaths.from_app(app).root)


def _static(app: Sphinx) -> list[Problem]:
    # the static folders conf.py or -D give (Sphinx would drop a missing one with a warning),
    # and at builder-inited those that packages add
    return check_static([str(Path(app.confdir, p)) for p in app.config.html_static_path])


def add_own_checks(app: Sphinx) -> None:
    add_check(app, _gitmodules, order=ORDER["gitmodules"])
    add_check(app, _static, order=ORDER["static"])
    add_check(app, _static, order=ORDER["static"], when="builder-inited")


def check_project_files(app: Sphinx, config: Config) -> None:
    """config-inited: every registered check (the lock, the registry of upstreams, the
    bibliography, ...), before any of those files is read."""
    fail(run_checks(app, "config-inited"))


def check_assets(app: Sphinx) -> None:
    """builder-inited, last (HTML builders): the files the build will copy are there, the
    static folders that packages add at builder-inited included."""
    if app.builder.format != "html":
        return
    fail(run_checks(app, "builder-inited"))
