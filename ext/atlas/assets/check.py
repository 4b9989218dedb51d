"""The npm packages' files the HTML build copies are there, at the versions
``package-lock.json`` locks: a project-file check handed to atlas.project at setup (run once
the builder is known, HTML builders only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atlas.assets.config import AssetsConfig
from atlas.project.errors import Problem, shown

NPM_PACKAGES = ("mathjax", "mermaid")


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


def check_offline_assets(app: Any) -> list[Problem]:
    from atlas.assets import MATHJAX_FILES, MERMAID_FILES

    node_modules = AssetsConfig.of(app).node_modules
    needed = [src for src, _ in MERMAID_FILES + MATHJAX_FILES]
    return check_npm(node_modules, needed, node_modules.parent / "package-lock.json")
