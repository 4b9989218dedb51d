"""Bytes `make upstreams` transfers for the book's citations, against full clones.

For every pinned upstream, over file:// URLs of the local mirrors (/work/.mirror/OWNER+NAME/repo,
or $ATLAS_MIRRORS), measured in one run on fresh stores in a temporary folder:

- ``fetch``: what ``atlas.upstream.fetch`` transfers (the cited commits with their trees, no
  history, and the cited blobs only);
- ``partial``: ``git clone --bare --filter=blob:none`` (a plain blob-less partial clone, all
  history);
- ``full``: ``git clone --bare`` (the baseline).

Bytes are the pack files received (what went over the wire). The citations are read from the
book at run time, so the figures follow the book as it grows. Last line: one JSON object.

    .venv/bin/python benchmarks/fetch.py [--no-partial] [NAME...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from atlas.upstream import partialclone
from atlas.upstream.fetch.needs import collect_needs
from atlas.upstream.fetch.transfer import fetch_upstream
from atlas.upstream.registry import load_registry

BOOK = Path(__file__).resolve().parents[1]
MIRRORS = Path(os.environ.get("ATLAS_MIRRORS", "/work/.mirror"))


def mirror_for(slug: str) -> Path | None:
    path = MIRRORS / slug.replace("/", "+") / "repo"
    for git_dir in (path / ".git", path):
        if (git_dir / "objects").is_dir():
            return git_dir
    return None


def isolated_git(tmp: Path) -> None:
    """A private global git config: file:// allowed, the mirrors serve filters and SHAs; the
    user's own configuration (and its URL rewrites) is left out of the measurement."""
    config = tmp / "gitconfig"
    config.write_text(
        '[protocol "file"]\n\tallow = always\n'
        "[uploadpack]\n\tallowFilter = true\n\tallowAnySHA1InWant = true\n"
        "[user]\n\tname = bench\n\temail = bench@atlas.invalid\n"
    )
    os.environ["GIT_CONFIG_GLOBAL"] = str(config)
    os.environ["GIT_CONFIG_NOSYSTEM"] = "1"


def clone_bytes(url: str, dest: Path, *extra: str) -> tuple[int | None, float, str]:
    """(pack bytes received, seconds, error) of ``git clone --bare EXTRA URL``."""
    start = time.perf_counter()
    proc = subprocess.run(
        ["git", "clone", "--bare", "--quiet", *extra, url, str(dest)],
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        return None, took, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
    size = partialclone.pack_bytes(dest)[0]
    shutil.rmtree(dest, ignore_errors=True)
    return size, took, ""


def clone_pack_bytes(git_dir: Path) -> int:
    """Size of the pack a clone would receive (branches and tags), made by the mirror itself
    while skipping the objects it lacks: the baseline where a real clone fails on them."""
    objects = subprocess.run(
        [
            "git",
            f"--git-dir={git_dir}",
            "rev-list",
            "--objects",
            "--missing=allow-any",
            "--branches",
            "--tags",
        ],
        capture_output=True,
        check=True,
    ).stdout
    pack = subprocess.Popen(
        [
            "git",
            f"--git-dir={git_dir}",
            "pack-objects",
            "--stdout",
            "--missing=allow-any",
            "--delta-base-offset",
            "-q",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert pack.stdin is not None and pack.stdout is not None
    pack.stdin.write(objects)
    pack.stdin.close()
    size = 0
    while chunk := pack.stdout.read(1 << 20):
        size += len(chunk)
    pack.wait()
    return size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--no-partial", action="store_true", help="skip the blob-less clones")
    args = parser.parse_args()
    registry = load_registry(BOOK)
    needs = collect_needs(BOOK, registry, args.names or None)
    rows = []
    with tempfile.TemporaryDirectory(prefix="atlas-bench-fetch-") as tmp_s:
        tmp = Path(tmp_s)
        isolated_git(tmp)
        for name, need in needs.items():
            up = need.upstream
            mirror = mirror_for(up.github_slug or "")
            if mirror is None:
                print(f"{name:<17} no mirror under {MIRRORS}; skipped", file=sys.stderr)
                continue
            url = mirror.resolve().as_uri()
            need = replace(need, upstream=replace(up, url=url))
            cited = sum(len(p) for p in need.paths.values())
            start = time.perf_counter()
            result = fetch_upstream(BOOK, need, into=tmp / f"{name}.git")
            took = time.perf_counter() - start
            again = fetch_upstream(BOOK, need, into=tmp / f"{name}.git")
            shutil.rmtree(tmp / f"{name}.git", ignore_errors=True)
            partial = (None, 0.0, "skipped")
            if not args.no_partial:
                partial = clone_bytes(url, tmp / "partial.git", "--filter=blob:none")
            full, full_s, full_err = clone_bytes(url, tmp / "full.git")
            estimated = full is None
            if estimated:  # the mirror lacks a large blob, so a clone fails: pack it ourselves
                full = clone_pack_bytes(mirror)
            row = {
                "upstream": name,
                "cited_files": cited,
                "fetch_bytes": result.bytes,
                "fetch_objects": result.objects,
                "fetch_s": round(took, 2),
                "second_run_bytes": again.bytes,
                "partial_bytes": partial[0],
                "full_bytes": full,
                "full_s": round(full_s, 2),
                "full_estimated": estimated,
                "ratio_full_over_fetch": round(full / max(result.bytes, 1), 1),
            }
            rows.append(row)
            note = (
                f" (clone failed: {full_err}; packed without the absent blobs)" if estimated else ""
            )
            print(
                f"{name:<17} {cited:>4} files  fetch {partialclone.human(result.bytes):>10}"
                f"  partial {partialclone.human(partial[0]) if partial[0] else '-':>10}"
                f"  full {partialclone.human(full):>10}  x{row['ratio_full_over_fetch']}{note}",
                file=sys.stderr,
            )
    total_fetch = sum(r["fetch_bytes"] for r in rows)
    total_full = sum(r["full_bytes"] for r in rows)
    partials = [r["partial_bytes"] for r in rows if r["partial_bytes"]]
    summary = {
        "upstreams": len(rows),
        "cited_files": sum(r["cited_files"] for r in rows),
        "fetch_bytes": total_fetch,
        "partial_bytes": sum(partials) if len(partials) == len(rows) else None,
        "full_bytes": total_full,
        "ratio_full_over_fetch": round(total_full / max(total_fetch, 1), 1),
        "second_run_bytes": sum(r["second_run_bytes"] for r in rows),
        "rows": rows,
    }
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
