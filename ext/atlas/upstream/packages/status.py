"""What ``python -m atlas.upstream check`` says about each package upstream: one line with
the pin, what is installed where, and where its permalinks point."""

from __future__ import annotations

from atlas.upstream.packages.files import SETUP_HINT, PackageError
from atlas.upstream.packages.installed import Installed, version_matches
from atlas.upstream.packages.registry import PackageUpstream


def status_lines(packages: dict[str, PackageUpstream], installed: Installed) -> list[str]:
    """``torch==2.13.0  installed 2.13.0+cpu (.../site-packages), 14621 RECORD files``."""
    out = []
    for name in sorted(packages):
        up = packages[name]
        try:
            files = installed.get(up)
        except PackageError as exc:
            out.append(f"{up.requirement:<18} {exc}")
            continue
        if files is None:
            state = f"not installed: {SETUP_HINT}"
        elif not version_matches(files.version, up.version):
            state = f"WRONG VERSION {files.version} installed ({files.where}): {SETUP_HINT}"
        else:
            state = f"installed {files.version} ({files.where}), {len(files.hashes)} RECORD files"
        out.append(f"{up.requirement:<18} {state}; permalinks at {up.web_url}/tree/{up.tag()}")
    return out
