"""The one loader of upstream code at the book's pins, and the one way a lab skips without it.

Labs check the taught code against the upstreams' own code. Nothing of an upstream is copied
into the repository: its files are read from the book's object store at the pinned commit and
executed in memory, under a file name ``name@<sha>/<path>`` so that tracebacks, ``inspect`` and
Triton (which reads a kernel's source through ``linecache``) find the upstream's own lines.

Three ways to load, for three shapes of upstream file:

- :func:`definitions` cuts named definitions (``f``, ``C``, ``C.method``, ``f.inner``, a
  module constant) out of a file with ``ast`` and runs only those, in file order, against the
  globals the caller supplies: for files whose imports need a GPU stack, a cluster or a
  compiled extension while the definitions themselves need only torch.
- :func:`module` runs a whole file whose imports are importable here (or supplied).
- :func:`package` runs several files as a package tree, in dependency order.

:func:`read` is the text of one file at the pin, for labs that parse a config or a script.

**The skip.** When an upstream's objects are absent (no ``make upstreams`` yet, a CI without
network), every reader raises :class:`UpstreamUnavailable`, a ``unittest.SkipTest``. That is
the one skip path: the build's worker records the lab as *skipped* with the reason, the
runnable ``_labs/*.py`` file counts it as skipped (and exits non-zero unless skips are
allowed), and :func:`atlas.labkit.ranks.run_ranks` carries it out of rank workers, so a lab
whose rank function loads an upstream skips the same way instead of crashing a rank. Never
catch it to print a message and return None: the next line of the lab would then fail on None
and blame the wrong thing.

A definition that the file at the pin does not contain is *not* a skip: the objects are there
and the file changed (a pin bump), so :class:`LookupError` names the file and the missing names.
"""

from __future__ import annotations

import ast
import linecache
import os
import sys
import types
import unittest
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas.bookroot import package_book

ROLE = "check"

__all__ = [
    "Definitions",
    "PinnedFiles",
    "UpstreamUnavailable",
    "definitions",
    "drop_all",
    "dropping",
    "keep_all",
    "keeping",
    "module",
    "package",
    "pinned",
    "read",
    "registered",
]


class UpstreamUnavailable(unittest.SkipTest):
    """An upstream's objects at the pin cannot be read here (run ``make upstreams``); a lab that
    needs them is skipped, visibly, with this message."""


@dataclass(frozen=True)
class PinnedFiles:
    """The files of one upstream at the book's pin, read from its object store.

    The stores never fetch on a read, so a file a lab reads must be named as a literal path in
    the labkit for ``make upstreams`` to bring it (:mod:`atlas.upstream.labpaths`); a file that
    is absent raises :class:`UpstreamUnavailable`, which skips the lab visibly.
    """

    name: str
    pin: str
    _read: Callable[[str], bytes]

    def label(self, digits: int = 8) -> str:
        """``name@sha``, the pin cut to ``digits`` hex digits (for messages and module names)."""
        return f"{self.name}@{self.pin[:digits]}"

    def read_bytes(self, path: str) -> bytes:
        return self._read(path)

    def read_text(self, path: str) -> str:
        return self._read(path).decode("utf-8")


def pinned(name: str, root: Path | None = None) -> PinnedFiles:
    """The reader of upstream ``name`` at its pin in the book at ``root`` (default: this one).

    The one place in the labkit that opens an object store.
    """
    try:
        from atlas.git.store import MissingObject, store_for
        from atlas.upstream.registry import load_registry, object_store
    except ImportError as exc:  # pragma: no cover - the book ships atlas.upstream
        raise UpstreamUnavailable(f"atlas.upstream is unavailable ({exc})") from exc
    root = root or package_book()
    upstream = load_registry(root).get(name)
    if upstream is None or upstream.pin is None:
        raise UpstreamUnavailable(f"{name} is not registered with a pin in {root}")
    git_dir = object_store(root, upstream)
    if git_dir is None:
        raise UpstreamUnavailable(f"no object store for {name}; run `make upstreams`")
    store, pin = store_for(git_dir), _pin_override(name) or upstream.pin

    def read_blob(path: str) -> bytes:
        try:
            return store.read_blob(pin, path)
        except (MissingObject, FileNotFoundError) as exc:
            raise UpstreamUnavailable(
                f"{name}@{pin[:8]} {path}: {exc}; run `make upstreams`"
            ) from exc

    return PinnedFiles(name, pin, read_blob)


def _pin_override(name: str) -> str | None:
    """The commit ``drift NAME REV --labs`` runs the labs at (``ATLAS_UPSTREAM_PINS``,
    ``name=FULLSHA,...``), instead of the pin: a broken loader is seen before the bump."""
    for item in os.environ.get("ATLAS_UPSTREAM_PINS", "").split(","):
        key, _, commit = item.partition("=")
        if key.strip() == name and commit.strip():
            return commit.strip()
    return None


def read(
    name: str, path: str, *, digits: int = 8, with_path: bool = False, root: Path | None = None
) -> tuple[str, str]:
    """The text of ``path`` in upstream ``name`` at its pin, and a label for messages:
    ``name@sha`` (``digits`` hex digits), or ``name@sha/path`` with ``with_path``."""
    files = pinned(name, root)
    label = files.label(digits)
    return files.read_text(path), f"{label}/{path}" if with_path else label


# -- which decorators stay on a definition that is cut out ---------------------------------------
Decorators = Callable[[ast.expr], bool]  # True: keep this decorator


def keep_all(decorator: ast.expr) -> bool:
    return True


def drop_all(decorator: ast.expr) -> bool:
    return False


def dropping(*prefixes: str) -> Decorators:
    """Keep every decorator except those whose source starts with one of ``prefixes``
    (``"torch.compile"``, ``"ray.remote"``: they need a GPU stack or a cluster)."""
    return lambda decorator: not ast.unparse(decorator).startswith(prefixes)


def keeping(*names: str) -> Decorators:
    """Keep only the decorators whose callee ends with one of ``names`` (``"jit"``: Triton's
    ``autotune`` would time configurations, which a check has no use for)."""
    return lambda decorator: ast.unparse(decorator).split("(")[0].endswith(names)


class Definitions(MutableMapping[str, Any]):
    """The globals the cut-out definitions ran in, read by key or by attribute, with the
    ``label`` of the file they came from (``name@sha/path``).

    A view, not a copy: a global set here after loading (a stand-in swapped for one check) is
    the one the definitions see.
    """

    def __init__(self, scope: dict[str, Any], label: str) -> None:
        self.__dict__["_scope"], self.__dict__["label"] = scope, label

    def __getitem__(self, key: str) -> Any:
        return self._scope[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._scope[key] = value

    def __delitem__(self, key: str) -> None:
        del self._scope[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._scope)

    def __len__(self) -> int:
        return len(self._scope)

    def __getattr__(self, key: str) -> Any:
        try:
            return self._scope[key]
        except KeyError:
            raise AttributeError(key) from None


def _select(body: list[ast.stmt], dotted: str) -> ast.stmt | None:
    """The statement defining ``dotted`` (``f``, ``C``, ``C.m``, ``f.inner``, ``CONSTANT``)."""
    head, _, rest = dotted.partition(".")
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == head:
                return node if not rest else _select(node.body, rest)
        elif not rest and isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == head for t in targets):
                return node
    return None


def _remember(label: str, text: str) -> None:
    """Give ``label`` the file's lines in ``linecache``, so that tracebacks and ``inspect``
    (Triton's ``jit`` reads a kernel's source this way) show the upstream's own code."""
    linecache.cache[label] = (len(text), None, text.splitlines(keepends=True), label)


def _module_for(label: str, namespace: dict[str, Any] | None) -> types.ModuleType:
    """A module object under a name of its own, registered: ``dataclasses`` and ``pickle``
    look a class's module up in ``sys.modules``."""
    module = types.ModuleType(label)
    module.__file__ = label
    module.__dict__.update(namespace or {})
    sys.modules[label] = module
    return module


def definitions(
    name: str,
    path: str,
    symbols: Iterable[str],
    namespace: dict[str, Any] | None = None,
    *,
    decorators: Decorators = keep_all,
    root: Path | None = None,
) -> Definitions:
    """Run only the definitions ``symbols`` of ``path`` in upstream ``name`` at the pin.

    They run in file order, at their own line numbers, in a fresh module seeded with
    ``namespace`` (the globals they need: ``torch``, ``math``, stand-ins for what the file
    imports). A method ``C.m`` or a nested ``f.inner`` becomes a plain top-level function (a
    method takes ``self`` explicitly) and loses its decorators; top-level definitions keep the
    decorators ``decorators`` accepts. Returns the namespace; each symbol under its last
    component (``C.m`` as ``m``).
    """
    files = pinned(name, root)
    text = files.read_text(path)
    label = f"{files.label()}/{path}"
    tree = ast.parse(text)
    wanted = list(dict.fromkeys(symbols))
    chosen: dict[int, ast.stmt] = {}
    missing = []
    for dotted in wanted:
        node = _select(tree.body, dotted)
        if node is None:
            missing.append(dotted)
            continue
        if hasattr(node, "decorator_list"):
            nested = "." in dotted
            node.decorator_list = [  # type: ignore[attr-defined]
                d
                for d in node.decorator_list  # type: ignore[attr-defined]
                if not nested and decorators(d)
            ]
        chosen[id(node)] = node
    if missing:
        raise LookupError(f"{label} defines no {', '.join(missing)} (did the pin move?)")
    body = sorted(chosen.values(), key=lambda n: n.lineno)
    _remember(label, text)
    module = _module_for(label, namespace)
    exec(compile(ast.Module(body=body, type_ignores=[]), label, "exec"), module.__dict__)  # noqa: S102 - upstream code at the pin
    return Definitions(module.__dict__, label)


@contextmanager
def registered(modules: dict[str, types.ModuleType]) -> Iterator[None]:
    """Make ``modules`` importable by name while upstream code runs, then restore sys.modules
    (so that a stand-in never leaks into the next lab)."""
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def _dotted(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def module(
    name: str,
    path: str,
    extra: dict[str, types.ModuleType] | None = None,
    *,
    namespace: dict[str, Any] | None = None,
    edit: Callable[[str], str] | None = None,
    root: Path | None = None,
) -> types.ModuleType:
    """Run the whole file ``path`` of upstream ``name`` at the pin as a module.

    ``extra`` modules (by dotted name: stand-ins for a package's siblings) are importable while
    it runs; ``namespace`` seeds its globals; ``edit`` rewrites the text first (to drop one
    import line the stand-ins replace), which the label then says.
    """
    files = pinned(name, root)
    text = files.read_text(path)
    label = f"{files.label()}/{path}"
    if edit is not None:
        text = edit(text)
    _remember(label, text)
    result = types.ModuleType(_dotted(path))
    result.__file__ = label
    parent = _dotted(path).rpartition(".")[0]
    result.__package__ = parent if extra and parent in extra else None
    result.__dict__.update(namespace or {})
    with registered(extra or {}):
        exec(compile(text, label, "exec"), result.__dict__)  # noqa: S102 - upstream code at the pin
    return result


def package(
    name: str,
    files: Iterable[str],
    extra: dict[str, types.ModuleType] | None = None,
    *,
    root: Path | None = None,
) -> dict[str, types.ModuleType]:
    """Run ``files`` of upstream ``name`` (in dependency order) as a package tree.

    Parent packages are created empty; ``extra`` modules are importable while the files run.
    Every file is read before any runs, so a missing one skips before anything executed.
    Returns every module by dotted name.
    """
    reader = pinned(name, root)
    files = tuple(files)
    sources = {path: reader.read_text(path) for path in files}
    modules: dict[str, types.ModuleType] = dict(extra or {})
    for path in files:
        parts = _dotted(path).split(".")
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if parent not in modules:
                modules[parent] = types.ModuleType(parent)
                modules[parent].__path__ = []
        leaf = types.ModuleType(_dotted(path))
        leaf.__file__ = f"{reader.label()}/{path}"
        modules[leaf.__name__] = leaf
    with registered(modules):
        for path in files:
            leaf = modules[_dotted(path)]
            _remember(leaf.__file__, sources[path])
            exec(compile(sources[path], leaf.__file__, "exec"), leaf.__dict__)  # noqa: S102 - upstream code at the pin
            parent, _, short = leaf.__name__.rpartition(".")
            setattr(modules[parent], short, leaf)
    return modules
