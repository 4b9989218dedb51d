"""The upstream directive against Sphinx's ``literalinclude``, 500 citations, in one run.

A fixture repository of our own generated Python (20 files of 600 lines) is cited 500 times
(10 pages of 50 ranges of 8 to 30 lines). The same 500 ranges are built twice:

- ``upstream``: ```` ```{upstream} bench PATH:A-B ```` read from git objects (a bare
  repository, no checkout), *cold* (empty snippet cache, no lock) and *warm* (cache and lock
  filled by a previous build);
- ``literalinclude``: ```` ```{literalinclude} ```` of a checked-out copy of the same commit,
  with ``:lines:``, ``:lineno-match:`` and ``:caption:`` (the baseline).

Each build is a fresh ``sphinx-build -E`` (HTML, MyST, only the extension under test) in its own
process; each figure is the best of ``--repeat`` runs. Ratios use CPU time (user + system of
the build and its git child); wall-time ratios are printed beside them. Targets: cold <= 1.3x,
warm <= 1.05x.

Then ``blob reads``: the latency of one blob read, ``--reads`` reads of the same repository's
blobs through our :class:`atlas.git.store.GitStore` (built on GitPython) and through GitPython's
bare persistent ``cat-file`` (``Repo.git.get_object_data`` and ``Repo.odb.stream``), best of
``max(--repeat, 5)`` rounds, the readers interleaved: what our layer adds to GitPython's reads
(see :mod:`atlas.git`).
Last line: one JSON object.

    .venv/bin/python benchmarks/upstream.py [--repeat 3] [--citations 500] [--reads 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from gitfixtures import FixtureUpstream, git, make_book, make_repo  # noqa: E402

FILES, LINES, PAGES = 20, 600, 10

CONF = """\
import sys
sys.path.insert(0, {ext!r})
extensions = ["myst_parser"{extra}]
exclude_patterns = ["_build", "checkout", "snippets_cache"]
root_doc = "index"
"""


def source_file(n: int) -> str:
    """Generated Python of our own: functions with bodies, comments and strings."""
    out = [f'"""Generated module {n} for the upstream benchmark."""', ""]
    i = 0
    while len(out) < LINES:
        out += [
            "",
            f"def func_{n}_{i}(x, y=2):",
            f"    # step {i}: scale, shift and clip",
            f"    z = x * y + {i}",
            f"    if z > {i * 10}:",
            f'        return "big-{i}"',
            "    return z",
        ]
        i += 1
    return "\n".join(out[:LINES]) + "\n"


def citations(count: int, seed: int = 7) -> list[tuple[str, int, int]]:
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        length = rnd.randint(8, 30)
        start = rnd.randint(1, LINES - length)
        out.append((f"pkg/mod{rnd.randrange(FILES)}.py", start, start + length - 1))
    return out


def pages(cites: list[tuple[str, int, int]], block) -> dict[str, str]:
    per = -(-len(cites) // PAGES)
    files = {"index.md": "# Bench\n\n```{toctree}\n:glob:\n\np*\n```\n"}
    for p in range(PAGES):
        body = [f"# Page {p}", ""]
        for path, a, b in cites[p * per : (p + 1) * per]:
            body += [block(path, a, b), ""]
        files[f"p{p:02d}.md"] = "\n".join(body)
    return files


def upstream_block(path: str, a: int, b: int) -> str:
    return f"```{{upstream}} bench {path}:{a}-{b}\n```"


def literal_block(path: str, a: int, b: int) -> str:
    return (
        f"```{{literalinclude}} /checkout/{path}\n:lines: {a}-{b}\n:lineno-match:\n"
        f":language: python\n:caption: bench · {path} · L{a}–L{b}\n```"
    )


def sphinx(book: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh build in its own process. CPU time (user +
    system, the build and its git child) is what the ratios use: on a shared machine wall time
    swings with other people's load, CPU time much less."""
    out = book / "_build"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "sphinx", "-E", "-q", "-b", "html", str(book), str(out)]
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if proc.returncode != 0 or "WARNING" in stderr or "ERROR" in stderr:
        raise SystemExit(f"build of {book} failed:\n{stderr[-3000:]}")
    return took, usage.ru_utime + usage.ru_stime


def per_read_ms(
    readers: dict[str, Callable[[str], bytes]], shas: list[str], reads: int, rounds: int
) -> dict[str, float]:
    """Best milliseconds per read of each reader: ``rounds`` rounds of ``reads`` blob reads,
    the readers interleaved within each round (so that the machine's load hits all alike),
    after one warm-up read each (a persistent process is then already running)."""
    for read in readers.values():
        read(shas[0])
    best = dict.fromkeys(readers, float("inf"))
    for _ in range(rounds):
        for name, read in readers.items():
            start = time.perf_counter()
            for i in range(reads):
                read(shas[i % len(shas)])
            best[name] = min(best[name], (time.perf_counter() - start) / reads * 1000)
    return best


def blob_reads(git_dir: Path, commit: str, reads: int, rounds: int) -> dict[str, float | None]:
    """Per-read latency (ms) of our GitStore and of GitPython's two bare readers."""
    sys.path.insert(0, str(REPO / "ext"))
    from atlas.git.store import GitStore

    store = GitStore(git_dir)
    readers: dict[str, Callable[[str], bytes]] = {"gitstore": lambda sha: store.read_object(sha)[1]}
    repo = None
    try:
        import git as gitpython  # GitPython, when installed
    except ImportError:
        print("  blob reads: GitPython is not importable; its figures are skipped")
    else:
        repo = gitpython.Repo(git_dir)
        readers["gitpython_get_object_data"] = lambda sha: repo.git.get_object_data(sha)[3]
        readers["gitpython_odb_stream"] = lambda sha: repo.odb.stream(bytes.fromhex(sha)).read()
    try:
        folder = store.tree(store.resolve_path(commit, "pkg")[2])  # type: ignore[index]
        shas = [sha for _mode, sha in folder.values()]
        found: dict[str, float | None] = dict(per_read_ms(readers, shas, reads, rounds))
    finally:
        store.close()
        if repo is not None:
            repo.close()
    for name in ("gitpython_get_object_data", "gitpython_odb_stream"):
        found.setdefault(name, None)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--citations", type=int, default=500)
    parser.add_argument("--reads", type=int, default=2000, help="blob reads per latency run")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="atlas-bench-"))
    try:
        repo = make_repo(
            tmp / "bench.git",
            [{f"pkg/mod{n}.py": source_file(n) for n in range(FILES)}],
            bare=True,
        )
        cites = citations(args.citations)
        ext = str(REPO / "ext")
        env = {**os.environ, "ATLAS_UPSTREAMS_ROOT": str(tmp / "stores")}
        (tmp / "stores").mkdir()
        os.symlink(repo.path, tmp / "stores" / "bench.git")

        ours = tmp / "ours"
        conf = CONF.format(ext=ext, extra=', "atlas.upstream"')
        make_book(ours, {"conf.py": conf, **pages(cites, upstream_block)},
                  {"bench": FixtureUpstream(repo, pin=repo.head)})  # fmt: skip
        base = tmp / "base"
        base.mkdir()
        for name, text in {
            "conf.py": CONF.format(ext=ext, extra=""),
            **pages(cites, literal_block),
        }.items():
            (base / name).write_text(text, encoding="utf-8")
        git(tmp, "clone", "-q", str(repo.path), str(base / "checkout"))

        def cold() -> tuple[float, float]:
            shutil.rmtree(ours / "snippets_cache", ignore_errors=True)
            (ours / "upstreams.lock").unlink(missing_ok=True)
            return sphinx(ours, env)

        runs: dict[str, list[tuple[float, float]]] = {"literalinclude": [], "cold": [], "warm": []}
        sphinx(base, env)  # warm the interpreter's files and the page cache for both
        for _ in range(args.repeat):  # interleaved, so drift in machine load hits all alike
            runs["literalinclude"].append(sphinx(base, env))
            runs["cold"].append(cold())
            runs["warm"].append(sphinx(ours, env))
        wall = {k: min(w for w, _ in v) for k, v in runs.items()}
        cpu = {k: min(c for _, c in v) for k, v in runs.items()}
        blocks = (ours / "_build" / "p00.html").read_text().count("upstream-block")
        assert blocks == -(-args.citations // PAGES), f"only {blocks} blocks rendered"
        latency = blob_reads(repo.git_dir, repo.head, args.reads, max(args.repeat, 5))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ratio = {k: cpu[k] / cpu["literalinclude"] for k in ("cold", "warm")}
    ratio_wall = {k: wall[k] / wall["literalinclude"] for k in ("cold", "warm")}
    print(f"{args.citations} citations, best of {args.repeat} fresh builds: CPU s (wall s)")
    rows = [
        ("literalinclude (checked-out files)", "literalinclude", ""),
        ("upstream, cold cache (git objects)", "cold", "target <= 1.3"),
        ("upstream, warm cache", "warm", "target <= 1.05"),
    ]
    for label, key, target in rows:
        line = f"  {label:<36} {cpu[key]:6.3f} ({wall[key]:6.3f})"
        if key in ratio:
            line += f"  ratio {ratio[key]:.3f} (wall {ratio_wall[key]:.3f}), {target}"
        print(line)
    print(f"blob reads, ms per read (best of {max(args.repeat, 5)} rounds of {args.reads}):")
    for name, value in latency.items():
        print(f"  {name:<36} " + ("skipped" if value is None else f"{value:.4f}"))
    print(json.dumps({
        "citations": args.citations,
        "literalinclude_cpu_s": round(cpu["literalinclude"], 4),
        "upstream_cold_cpu_s": round(cpu["cold"], 4),
        "upstream_warm_cpu_s": round(cpu["warm"], 4),
        "ratio_cold": round(ratio["cold"], 4),
        "ratio_warm": round(ratio["warm"], 4),
        "ratio_cold_wall": round(ratio_wall["cold"], 4),
        "ratio_warm_wall": round(ratio_wall["warm"], 4),
        "target_cold": 1.3,
        "target_warm": 1.05,
        **{f"read_ms_{k}": None if v is None else round(v, 4) for k, v in latency.items()},
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
