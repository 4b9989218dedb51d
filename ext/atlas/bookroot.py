"""Where the book is, and how to name a command that works: one answer for every maintainer tool.

Every command (``python -m atlas.upstream check|lock|fetch|drift|bump``, the link-check report,
``python -m atlas.latex build``) finds the book the same way: ``--root`` when given, else the
nearest folder, from the current one upwards, that holds the book's ``conf.py`` (or its
``.gitmodules``) beside its ``source/`` pages. Run from ``source/parallelism/``, a command
finds the same book as from the top.

:class:`BookPaths` is the one answer to "where is what" for a build (:meth:`BookPaths.from_app`)
and for a command (:meth:`BookPaths.from_cli`): the root, the pages, ``conf.py``'s folder, the
snippet cache, the lock file and the folder of extra object stores. ``$ATLAS_UPSTREAMS_ROOT``
is read here and nowhere else (:func:`extra_stores_root`).

Messages that tell the reader to run something print a command that works as printed, from
where they ran it (:func:`command`): ``make lock`` at the root of a book with that target, else
the Python of this very process (``.venv/bin/python -m atlas.upstream lock``), with ``--root``
when the current folder is not inside the book and ``--source`` when the pages are not in
``source/`` (known from the :class:`BookPaths` the caller passes, not from a global).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas.settings import optional_path

SOURCE = "source"
CONF = "conf.py"
SNIPPETS_CACHE = "snippets_cache"
LOCK_FILE = "upstreams.lock"
BUILD = "_build"  # the build folder of the book's make targets (sphinx-build -M ... _build)
# A folder of extra object stores (NAME.git or NAME), searched first: fixture books in tests and
# benchmarks point it at their own repositories. The atlas_upstreams_root setting wins over it.
UPSTREAMS_ROOT_ENV = "ATLAS_UPSTREAMS_ROOT"

# Commands with a make target of the same job (target, the upstream command it runs).
MAKE_TARGETS = {("lock",): "lock", ("fetch",): "upstreams"}


class NotABook(Exception):
    """No book where the command looked; the message says where it looked and the fix."""


def is_book(folder: Path, source: str = SOURCE) -> bool:
    """A folder with the book's pages (``source/``) beside its ``conf.py`` (or, for a book
    without settings of its own, its registry of upstreams, ``.gitmodules``)."""
    marker = (folder / CONF).is_file() or (folder / ".gitmodules").is_file()
    return marker and (folder / source).is_dir()


def find_root(
    given: Path | str | None = None, start: Path | None = None, source: str = SOURCE
) -> Path:
    """The book's root: ``given`` (``--root``), else the nearest book at or above ``start``
    (default: the current folder). Raises :class:`NotABook`."""
    if given is not None:
        root = Path(given).expanduser().resolve()
        if not root.is_dir():
            raise NotABook(f"--root {given}: no such folder")
        if not (root / source).is_dir() and not (root / CONF).is_file():
            raise NotABook(
                f"--root {given} is not a book: it has neither {CONF} nor a {source}/ folder"
            )
        return root
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if is_book(folder, source):
            return folder
    raise NotABook(
        f"no book here: neither {here} nor a folder above it holds {CONF} and {source}/; "
        "run the command inside the book, or give --root PATH"
    )


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _has_make_target(root: Path, target: str) -> bool:
    makefile = root / "Makefile"
    try:
        text = makefile.read_text(encoding="utf-8")
    except OSError:
        return False
    return re.search(rf"^{re.escape(target)}\s*:", text, re.M) is not None


def python(cwd: Path | None = None) -> str:
    """This process's Python as the reader can type it from ``cwd``: ``.venv/bin/python`` at
    the root of the checkout, an absolute path elsewhere."""
    exe = Path(sys.executable)
    cwd = (cwd or Path.cwd()).resolve()
    if _inside(exe.parent, cwd):
        return os.path.relpath(exe.absolute(), cwd)
    return str(exe)


def command(book: Path | BookPaths, *args: str, cwd: Path | None = None) -> str:
    """A command that runs ``python -m atlas.upstream ARGS`` on the book (its root, or its
    :class:`BookPaths` when the pages may be elsewhere than ``source/``), as the reader can type
    it where they are: ``make TARGET`` at a root that has the target."""
    cwd = (cwd or Path.cwd()).resolve()
    if isinstance(book, BookPaths):
        root, source = book.root.resolve(), book.source_arg
    else:
        root, source = Path(book).resolve(), SOURCE
    target = MAKE_TARGETS.get(tuple(args))
    if target and cwd == root and source == SOURCE and _has_make_target(root, target):
        return f"make {target}"
    tail = "" if _inside(cwd, root) else f" --root {root}"
    if source != SOURCE:
        tail += f" --source {source}"
    return f"{python(cwd)} -m atlas.upstream {' '.join(args)}{tail}"


def extra_stores_root(given: Path | str | None = None) -> Path | None:
    """The folder of extra object stores: ``given`` (``--stores``, ``atlas_upstreams_root``),
    else ``$ATLAS_UPSTREAMS_ROOT``, else None. The only reader of that variable."""
    if given:
        return Path(given)
    from_env = os.environ.get(UPSTREAMS_ROOT_ENV)
    return Path(from_env) if from_env else None


@dataclass(frozen=True)
class BookPaths:
    """Where the book's parts are, for a build or a maintainer command alike."""

    root: Path  # the book's repository: .gitmodules, the gitlinks, upstreams.lock
    source: Path  # the pages
    conf_dir: Path  # conf.py's folder
    snippets_cache: Path
    lock_file: Path
    stores_root: Path | None  # extra object stores, searched first (None: none)

    @property
    def source_arg(self) -> str:
        """The pages folder as ``--source`` takes it: relative to the root, when inside it."""
        try:
            return self.source.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(self.source.resolve())

    @property
    def build(self) -> Path:
        """The build folder the book's make targets use (``_build``), for commands that read
        what a build wrote."""
        return self.root / BUILD

    @classmethod
    def at(
        cls,
        root: Path | str,
        source: str = SOURCE,
        stores: Path | str | None = None,
        snippets_cache: Path | None = None,
    ) -> BookPaths:
        """The paths of the book at ``root``, as given (nothing searched or checked): for code
        handed a root, such as a resolver made in a test."""
        found = Path(root).resolve()
        return cls(
            root=found,
            source=found / source,
            conf_dir=found,
            snippets_cache=snippets_cache or found / SNIPPETS_CACHE,
            lock_file=found / LOCK_FILE,
            stores_root=extra_stores_root(stores),
        )

    @classmethod
    def from_app(cls, app: Any) -> BookPaths:
        """The paths of a Sphinx build: ``atlas_book_root`` (default: conf.py's folder),
        ``atlas_snippets_cache`` and ``atlas_upstreams_root`` when the extension that declares
        them is loaded.

        They are atlas.upstream's settings (``UpstreamConfig``), read here by name and converted
        by the same rule (``optional_path``): this module sits below every feature, upstream
        included, so it imports none. atlas.project checked the values at config-inited."""
        config = app.config

        def path(name: str) -> Path | None:
            return optional_path(config[name] if name in config else None)

        conf_dir = Path(app.confdir or app.srcdir).resolve()
        root = Path(path("atlas_book_root") or conf_dir).resolve()
        return cls(
            root=root,
            source=Path(app.srcdir).resolve(),
            conf_dir=conf_dir,
            snippets_cache=path("atlas_snippets_cache") or root / SNIPPETS_CACHE,
            lock_file=root / LOCK_FILE,
            stores_root=extra_stores_root(path("atlas_upstreams_root")),
        )

    @classmethod
    def from_cli(
        cls,
        root: Path | str | None = None,
        source: str = SOURCE,
        stores: Path | str | None = None,
        start: Path | None = None,
    ) -> BookPaths:
        """The paths of a command: ``--root`` (else the book around ``start``, default the
        current folder; see :func:`find_root`), ``--source``, ``--stores``. NotABook when there
        is no book."""
        return cls.at(find_root(root, start=start, source=source), source, stores)


def package_book() -> Path:
    """The book this ``atlas`` package belongs to (``ROOT/ext/atlas``), for code that runs
    without Sphinx or a command line, such as labs reading upstream code at the pin. Outside a
    book (an installed package), the package's grandparent: its registry is empty, so readers
    say the upstream is unavailable."""
    package = Path(__file__).resolve().parent
    try:
        return find_root(start=package)
    except NotABook:
        return package.parents[1]
