"""The result cache: one JSON file per page key, in the build folder, written atomically.

The key covers everything that decides a lab's outcome and nothing that does not: the page's
lab sources in order (with the options that change a run), the ``atlas.labkit`` files its labs
import (directly, through the packages above them, or through other labkit modules: see
:mod:`atlas.labs.imports`), the runner's own code, Python, torch, numpy, the device, and the
pins of the upstreams those labs read, with whether their objects are present (labs may run
upstream code at the pin; moving one pin re-runs only the pages whose labs read it).
Editing one labkit helper re-runs only the pages that reach it. Unlike myst-nb's cache, which
keys on the notebook's code only, an upgrade of torch or a move to a GPU machine re-runs the
labs.
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import sys
import tempfile
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from functools import cache, lru_cache
from pathlib import Path

from atlas.bookroot import BookPaths
from atlas.labs.imports import LABKIT, closure, data_files, lab_modules
from atlas.labs.model import LabSpec, PageResult
from atlas.labs.sandbox import describe as sandbox_kind
from atlas.upstream.registry import load_registry, object_store

ATLAS = LABKIT.parent
# The code that runs a lab and decides its outcome, relative to the atlas package.
RUNNER_FILES = (
    "labs/worker.py",
    "labs/zygote.py",
    "labs/protocol.py",
    "labs/model.py",
    "labs/sandbox.py",
    "labs/landlock.py",
    "processes.py",
)


def _tree_digest(root: Path, files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def imports_digest(specs: list[LabSpec], root: Path = LABKIT) -> str:
    """Digest of the labkit files that a page's labs import, transitively.

    Read statically (``ast``): a lab that reached labkit some other way (``importlib`` with a
    computed name) would escape it, which no lab of the book does.
    """
    sources = [example.source for spec in specs for example in spec.examples]
    files = closure(lab_modules(sources, root), root)
    return _tree_digest(root, files + data_files(files))


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


@cache
def device() -> str:
    """ "cuda" when torch is a CUDA build and an NVIDIA device is present, else "cpu".

    Read without importing torch: Sphinx's own process never imports it.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return "cpu"
    version_py = Path(list(spec.submodule_search_locations)[0]) / "version.py"
    try:
        text = version_py.read_text()
    except OSError:
        return "cpu"
    if re.search(r"^cuda\s*(?::[^=]*)?=\s*None", text, re.MULTILINE):
        return "cpu"
    return "cuda" if any(Path("/dev").glob("nvidia[0-9]*")) else "cpu"


@cache
def runtime_digest() -> str:
    """Python, torch, numpy, device, the runner's code and its sandbox (a lab that writes into
    the book fails on a refused write under Landlock, on a detected one without it)."""
    runner = _tree_digest(ATLAS, [ATLAS / name for name in RUNNER_FILES])
    parts = [sys.version, _version("torch"), _version("numpy"), device(), runner, sandbox_kind()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def upstream_states(paths: BookPaths) -> dict[str, str]:
    """Each upstream's pin and whether its objects are here (in the book's stores, the
    ``atlas_upstreams_root`` folder included), by name; read once per build."""
    root, stores = paths.root, paths.stores_root
    try:
        return {
            name: f"{upstream.pin}:{'objects' if object_store(root, upstream, stores) else '-'}"
            for name, upstream in load_registry(root).items()
        }
    except (OSError, ValueError) as exc:  # git not started, .gitmodules unreadable: a state
        return {"": f"registry unreadable: {type(exc).__name__}"}


def states_digest(states: dict[str, str], names: Collection[str] | None = None) -> str:
    """The digest of the states of ``names`` (None: every upstream). A registry that could not
    be read is part of every digest."""
    chosen = sorted(
        f"{name}={state}" for name, state in states.items() if names is None or name in names
        or name == ""
    )  # fmt: skip
    return hashlib.sha256("\0".join(chosen).encode()).hexdigest()


def upstreams_digest(paths: BookPaths, names: Collection[str] | None = None) -> str:
    """The pins and object presence of the upstreams ``names`` (None: all of them).

    Labs may run upstream code read at the pin (``atlas.labkit.serving.nanovllm``): moving a pin
    or fetching the objects (``make upstreams``) must re-run them, not serve a stale result;
    but only the labs that read that upstream (:func:`upstreams_read`).
    """
    return states_digest(upstream_states(paths), names)


def _string_literals(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def upstreams_read(specs: list[LabSpec], known: Collection[str], root: Path = LABKIT) -> set[str]:
    """The upstreams a page's labs may read: each registered name that occurs as a string
    literal in the labs or in the labkit files they reach (the closure of
    :func:`imports_digest`). The labkit names an upstream literally where it reads it
    (``pinned("megatron")``, ``UPSTREAM = "nano-vllm"``), as it names the files it reads
    (:mod:`atlas.upstream.labpaths`); a name built at run time would escape the key."""
    sources = [example.source for spec in specs for example in spec.examples]
    literals: set[str] = set()
    for source in sources:
        literals |= _string_literals(source)
    for path in closure(lab_modules(sources, root), root):
        literals |= _file_literals(str(path), path.stat().st_mtime_ns)
    return literals & set(known)


@lru_cache(maxsize=512)
def _file_literals(path: str, mtime_ns: int) -> frozenset[str]:
    try:
        return frozenset(_string_literals(Path(path).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError):
        return frozenset()


def page_key(
    specs: list[LabSpec], labkit: str, seed: int, memory_limit_mb: int, upstreams: str = ""
) -> str:
    """The cache key of a page's labs."""
    material = [spec.key_material() for spec in specs]
    material += [labkit, runtime_digest(), str(seed), str(memory_limit_mb), upstreams]
    return hashlib.sha256("\0".join(material).encode()).hexdigest()


class ResultCache:
    """``<build>/.labs-cache/<key>.json``; unreadable entries count as misses."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def load(self, key: str) -> PageResult | None:
        try:
            data = json.loads((self.folder / f"{key}.json").read_text(encoding="utf-8"))
            result = PageResult.from_json(data)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return result if result.key == key else None

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Held while a build looks its labs up and runs the missing ones: two builds that share
        the cache (``make html`` builds the English and Chinese editions side by side) run each
        lab once, the second finding the first's results here once the first lets go."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / ".lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def store(self, result: PageResult) -> None:
        """Write atomically: a crash or a concurrent build never leaves a torn entry."""
        self.folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(result.to_json(), indent=1, sort_keys=True)
        handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        try:
            os.fchmod(handle, 0o644)
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            os.replace(temporary, self.folder / f"{result.key}.json")
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
