"""The ``upstream`` directive and role: exact upstream code, numbered as upstream numbers it.

A wrong citation is one error at its page and line, and the build fails at its end even
without ``-W`` (a book that quotes the wrong code must not publish). Absent objects only give
a visible placeholder and a warning ``upstream.missing``, which strict CI builds may allow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import SphinxError
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from atlas.bookroot import BookPaths, set_source
from atlas.upstream import lockcheck
from atlas.upstream.resolve import (
    DRIFT,
    ERROR,
    MISSING,
    OK,
    Resolution,
    Resolver,
)

logger = logging.getLogger(__name__)
REV_PREFIX = "rev:"
ELISION = "\u22ee {n} lines not shown (L{a}\u2013L{b})"


class UpstreamCitationError(SphinxError):
    category = "Upstream citation error"


# This build's resolver per source folder: made at builder-inited, inherited by -j workers.
_RESOLVERS: dict[str, Resolver] = {}


def resolver(env: BuildEnvironment) -> Resolver:
    found = _RESOLVERS.get(str(env.srcdir))
    if found is None:
        raise UpstreamCitationError("atlas.upstream: no resolver (builder-inited did not run)")
    return found


def book_root(app: Sphinx) -> Path:
    return BookPaths.from_app(app).root


def make_resolver(app: Sphinx) -> Resolver:
    paths = BookPaths.from_app(app)
    root = paths.root
    res = Resolver.from_paths(
        paths,
        max_lines=int(app.config.atlas_upstream_max_lines),
        # a frozen lock is checked against the whole book at the end (lockcheck), so that a
        # check run after an update build, which re-reads nothing, still sees every citation
        frozen=False,
    )
    _RESOLVERS[str(app.srcdir)] = res
    set_source(root, Path(app.srcdir))  # the commands messages print name these pages
    return res


def report(env: BuildEnvironment, res: Resolution, location: tuple[str, int], kind: str) -> None:
    """Log the outcome (error, drift, missing) and remember errors and new lock entries."""
    docname = env.docname
    if res.status in (ERROR, DRIFT):
        subtype = "drift" if res.status == DRIFT else "error"
        logger.error(
            "upstream %s '%s': %s", kind, res.raw, res.message,
            location=location, type="upstream", subtype=subtype,
        )  # fmt: skip
        errors = env.atlas_upstream_errors  # type: ignore[attr-defined]
        errors.setdefault(docname, []).append((location[1], f"{res.raw}: {res.message}"))
    elif res.status == MISSING:
        logger.warning(
            "upstream %s '%s': %s", kind, res.raw, res.message,
            location=location, type="upstream", subtype="missing",
        )  # fmt: skip
        env.atlas_upstream_missing.add(docname)  # type: ignore[attr-defined]
    if res.upstream is not None:  # the page depends on this upstream's pin (see outdated)
        pins = env.atlas_upstream_pins  # type: ignore[attr-defined]
        pins.setdefault(docname, {})[res.upstream.name] = res.upstream.pin
    new = env.atlas_upstream_new  # type: ignore[attr-defined]
    if res.new_entry and res.key and res.entry:
        new.setdefault(docname, {})[res.key] = (res.entry.blob, res.entry.sha256)
    if res.rev_key and res.commit and res.status in (OK, DRIFT):
        new.setdefault(docname, {})[REV_PREFIX + res.rev_key] = (res.commit, "")
    lockcheck.record(env, res, location[1])


def caption_node(res: Resolution, title: str | None) -> nodes.caption:
    """The caption: optional title, then ``NAME@sha · path · L10–L40`` linking to GitHub.

    The link is a plain ``reference`` with ``refuri``, so LaTeX keeps it (footnote or URL).
    """
    label = res.caption()
    ref = nodes.reference(label, label, refuri=res.permalink or "", classes=["upstream-permalink"])
    children: list[nodes.Node] = []
    if title:
        children += [nodes.Text(title), nodes.Text(" \u2014 ")]
    children.append(ref)
    return nodes.caption((title + " \u2014 " if title else "") + label, "", *children)


def code_blocks(res: Resolution, directive: SphinxDirective) -> list[nodes.Element]:
    """One literal block per segment (each numbered from its first upstream line), with an
    elision line between segments."""
    out: list[nodes.Element] = []
    for i, seg in enumerate(res.segments):
        if i:
            prev = res.segments[i - 1]
            a, b = prev.end + 1, seg.start - 1
            text = (
                ELISION.format(n=b - a + 1, a=a, b=b)
                if b > a
                else f"\u22ee 1 line not shown (L{a})"
            )
            out.append(nodes.paragraph(text, text, classes=["upstream-elision"]))
        code = "\n".join(seg.lines)
        block = nodes.literal_block(code, code, classes=["upstream-code"])
        block["language"] = res.language
        block["linenos"] = True
        block["force"] = True  # upstream code is shown as is, even where the lexer stumbles
        hl = [n - seg.start + 1 for n in res.emphasize if seg.start <= n <= seg.end]
        block["highlight_args"] = {"linenostart": seg.start, **({"hl_lines": hl} if hl else {})}
        directive.set_source_info(block)
        out.append(block)
    return out


def placeholder(res: Resolution) -> nodes.admonition:
    """What a reader sees when the objects are absent: the citation and its permalink."""
    box = nodes.admonition(classes=["upstream-missing", "warning"])
    box += nodes.title("", "Upstream code not available in this build")
    para = nodes.paragraph()
    label = res.caption()
    para += nodes.literal(label, label)
    package = getattr(res.upstream, "kind", "git") == "package"
    para += nodes.Text(
        f" is not shown because the package {res.upstream.requirement} is not installed here. "  # type: ignore[union-attr]
        if package
        else " is not shown because the upstream's git objects are absent here. "
    )
    if res.permalink:
        para += nodes.reference("", "Read it on GitHub", refuri=res.permalink)
        para += nodes.Text(", or run ")
    else:
        para += nodes.Text("Run ")
    command = "make setup" if package else "make upstreams"
    para += nodes.literal(command, command)
    para += nodes.Text(" and rebuild.")
    box += para
    return box


class UpstreamDirective(SphinxDirective):
    """``.. upstream:: NAME[@REV] PATH[:SELECTOR]`` (MyST: a ``{upstream}`` fence)."""

    has_content = True
    required_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {
        "start-after": directives.unchanged_required,
        "end-before": directives.unchanged_required,
        "emphasize-lines": directives.unchanged_required,
        "dedent": directives.unchanged,
        "language": directives.unchanged_required,
        "caption": directives.unchanged_required,
        "contains": directives.unchanged_required,
        "name": directives.unchanged,
        "class": directives.class_option,
    }

    def run(self) -> list[nodes.Node]:
        location = (self.env.docname, self.lineno)
        if self.content:
            res = Resolution(raw=self.arguments[0], status=ERROR)
            res.message = (
                "the upstream directive takes no content: upstream code is never pasted into "
                "pages; remove the lines inside the block"
            )
            report(self.env, res, location, "citation")
            return []
        options = {k: ("" if v is None else str(v)) for k, v in self.options.items()}
        options = {k: v for k, v in options.items() if k not in ("name", "class", "caption")}
        res = resolver(self.env).resolve(self.arguments[0], options)
        report(self.env, res, location, "citation")
        if res.status in (ERROR, DRIFT):
            return []
        if res.status == MISSING:
            return [placeholder(res)]
        wrapper = nodes.container(
            "",
            literal_block=True,
            classes=["literal-block-wrapper", "upstream-block", *self.options.get("class", [])],
        )
        wrapper += caption_node(res, self.options.get("caption"))
        wrapper += code_blocks(res, self)
        self.set_source_info(wrapper)
        self.add_name(wrapper)
        return [wrapper]


class UpstreamRole(SphinxRole):
    """``{upstream}`NAME@REV PATH:SELECTOR``: a checked link labelled ``file.py:L10–L40``, or
    ``path/file.py::Class.method`` for a symbol (its lines in the title and the permalink)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        location = self.get_location_tuple()
        res = resolver(self.env).resolve(self.text, {})
        report(self.env, res, location, "reference")
        if res.status in (ERROR, DRIFT) or res.spec is None:
            return [
                nodes.literal(self.rawtext, self.text, classes=["upstream-ref", "upstream-broken"])
            ], []
        # a symbol reads as what it is, path::Class.method; its lines are in the title (the
        # caption, NAME@sha · path · L12–L92) and in the permalink (#L12-L92)
        spec = res.spec
        label = f"{spec.path}{spec.selector}" if spec.is_symbol else res.label()
        ref = nodes.reference(
            self.rawtext, "", refuri=res.permalink or "", classes=["upstream-ref"]
        )
        ref["reftitle"] = res.caption()
        ref += nodes.literal(label, label)
        if res.status == MISSING:
            ref["classes"].append("upstream-missing")
        return [ref], []

    def get_location_tuple(self) -> tuple[str, int]:
        """The role's own line. MyST gives a role the line of its paragraph; the page is read
        to find the line that holds the role, so errors point where ``check`` points."""
        source, line = self.get_source_info()
        first = self.text.strip().splitlines()[0] if self.text.strip() else ""
        lines = _page_lines(str(source)) if source else []
        for i in range(max(line - 1, 0), min(len(lines), max(line - 1, 0) + 500)):
            if first and first in lines[i]:
                return self.env.docname, i + 1
        return self.env.docname, line


_PAGES: dict[str, list[str]] = {}


def _page_lines(source: str) -> list[str]:
    if source not in _PAGES:
        try:
            _PAGES[source] = Path(source).read_text(encoding="utf-8").splitlines()
        except OSError:
            _PAGES[source] = []
    return _PAGES[source]


# -- environment: errors and new lock entries survive -j and incremental builds --------------
DOC_MAPS = ("atlas_upstream_errors", "atlas_upstream_new", "atlas_upstream_pins", lockcheck.KEYS)


def env_init(app: Sphinx, env: BuildEnvironment, docnames: list[str] | None = None) -> None:
    for attr in DOC_MAPS:
        if not hasattr(env, attr):
            setattr(env, attr, {})
    if not hasattr(env, "atlas_upstream_missing"):
        env.atlas_upstream_missing = set()  # type: ignore[attr-defined]


def purge_doc(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    env_init(app, env)
    for attr in DOC_MAPS:
        getattr(env, attr).pop(docname, None)
    env.atlas_upstream_missing.discard(docname)  # type: ignore[attr-defined]


def merge_info(
    app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment
) -> None:
    env_init(app, env)
    for attr in DOC_MAPS:
        mine, theirs = getattr(env, attr), getattr(other, attr, {})
        for docname in docnames:
            if docname in theirs:
                mine[docname] = theirs[docname]
    env.atlas_upstream_missing |= getattr(other, "atlas_upstream_missing", set()) & set(docnames)  # type: ignore[attr-defined]


def outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Pages to re-read though unchanged: those with a wrong or placeholder citation, when what
    they read from outside the pages changed (objects fetched, the lock edited, a package
    installed; otherwise the ledger of atlas.project repeats their errors and a no-op build
    reads nothing), and those citing an upstream whose pin moved (a bumped gitlink changes what
    an unqualified citation shows)."""
    env_init(app, env)
    state = outside_state(resolver(env))
    if getattr(env, "atlas_upstream_state", None) != state:
        again = set(env.atlas_upstream_errors) | env.atlas_upstream_missing  # type: ignore[attr-defined]
    else:
        again = set()
    env.atlas_upstream_state = state  # type: ignore[attr-defined]
    registry = resolver(env).registry
    packages = resolver(env).packages  # a package's pin is its version in pyproject.toml
    for docname, used in env.atlas_upstream_pins.items():  # type: ignore[attr-defined]
        for name, pin in used.items():
            up = registry.get(name) or packages.get(name)
            if (up.pin if up else None) != pin:
                again.add(docname)
    return sorted((again & set(env.found_docs)) - removed)


def outside_state(res: Resolver) -> str:
    """A digest of what citations read from outside the pages: the lock, the object stores
    (their packs and refs), the snippet cache, the installed packages. Cheap: file stats."""
    import hashlib
    import os
    import sys

    from atlas.upstream.lock import lock_path
    from atlas.upstream.registry import object_store

    def stamp(path: Path) -> str:
        try:
            st = path.stat()
        except OSError:
            return f"{path}:-"
        return f"{path}:{st.st_mtime_ns}:{st.st_size}"

    parts = [stamp(lock_path(res.book_root)), stamp(res.cache.folder)]
    for name, up in sorted(res.registry.items()):
        git_dir = object_store(res.book_root, up, res.stores_root)
        parts.append(f"{name}:{up.pin}:{git_dir}")
        if git_dir is not None:
            for sub in ("objects", "objects/pack", "refs", "refs/tags", "packed-refs"):
                parts.append(stamp(git_dir / sub))
    parts += [stamp(Path(p)) for p in sys.path if p and os.path.isdir(p)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def build_finished(app: Sphinx, exception: BaseException | None) -> None:
    """Record new lock entries, then fail the build if any citation was wrong."""
    if exception is not None or app.env is None:
        return
    env = app.env
    env_init(app, env)
    new = env.atlas_upstream_new  # type: ignore[attr-defined]
    if new and app.config.atlas_upstream_lock == "update":
        from atlas.upstream.lock import LockEntry, load_lock, load_revs, save_lock

        root = book_root(app)
        lock, revs = load_lock(root), load_revs(root)
        added = 0
        for entries in new.values():
            for key, (blob, sha) in entries.items():
                if key.startswith(REV_PREFIX):
                    if revs.get(key[len(REV_PREFIX) :]) != blob:
                        revs[key[len(REV_PREFIX) :]] = blob
                        added += 1
                elif key not in lock:
                    lock[key] = LockEntry(blob, sha)
                    added += 1
        if added and save_lock(root, lock, revs):
            logger.info("upstreams.lock: %d new citation(s) recorded; commit upstreams.lock", added)
        env.atlas_upstream_new = {}  # type: ignore[attr-defined]
    lockcheck.finish(app, env, book_root(app), app.config.atlas_upstream_lock == "frozen")
    errors = env.atlas_upstream_errors  # type: ignore[attr-defined]
    if errors:
        # Each error was already logged at its page and line; end with a summary and a
        # failed status (not an exception: no traceback, and other builders carry on).
        logger.error(
            "%d upstream citation(s) are wrong (each reported at its page and line); "
            "the book must not quote wrong code",
            sum(len(found) for found in errors.values()),
            type="upstream",
            subtype="summary",
        )
        app.statuscode = 1
