"""The ``upstream`` directive and role: exact upstream code, numbered as upstream numbers it.

A wrong citation is one error at its page and line, and the build fails at its end even
without ``-W`` (a book that quotes the wrong code must not publish). Absent objects only give
a visible placeholder and a warning ``upstream.missing``, which strict CI builds may allow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar
from weakref import WeakKeyDictionary

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import SphinxError
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from atlas.bookroot import BookPaths, command
from atlas.code.codeblocks import code_blocks
from atlas.code.options import option_spec
from atlas.code.permalink import is_commit
from atlas.upstream import behind, lockcheck
from atlas.upstream.config import UpstreamConfig
from atlas.upstream.lock import REV_PREFIX
from atlas.upstream.packages.registry import PackageUpstream
from atlas.upstream.registry import Upstream
from atlas.upstream.resolve import (
    DRIFT,
    ERROR,
    MISSING,
    OK,
    Resolution,
    Resolver,
)
from atlas.upstream.state import upstream_state

logger = logging.getLogger(__name__)
# attributes of a citation's link (caption or role), read by atlas.latex.index
CITED_UPSTREAM, CITED_PATH = "upstream", "upstream_path"
CITED_COMMIT, CITED_LINES = "upstream_commit", "upstream_lines"


class UpstreamCitationError(SphinxError):
    category = "Upstream citation error"


# Each build's resolver, kept beside its environment and forgotten with it (a weak key): made
# at builder-inited, inherited by -j workers. Not an attribute of the environment, which is
# pickled, while a resolver holds git processes.
_RESOLVERS: WeakKeyDictionary[BuildEnvironment, Resolver] = WeakKeyDictionary()


def resolver(env: BuildEnvironment) -> Resolver:
    found = _RESOLVERS.get(env)
    if found is None:
        raise UpstreamCitationError("atlas.upstream: no resolver (builder-inited did not run)")
    return found


def make_resolver(app: Sphinx) -> Resolver:
    res = Resolver.from_paths(
        BookPaths.from_app(app),
        max_lines=UpstreamConfig.of(app).max_lines,
        # a frozen lock is checked against the whole book at the end (lockcheck), so that a
        # check run after an update build, which re-reads nothing, still sees every citation
        frozen=False,
    )
    _RESOLVERS[app.env] = res
    return res


def report(
    env: BuildEnvironment,
    res: Resolution,
    location: tuple[str, int],
    kind: str,
    where: str | None = None,
    behind_reason: str | None = None,
) -> None:
    """Log the outcome (error, drift, missing, behind the pin) and remember errors and new lock
    entries.

    ``where`` is the directive's own file and line, logged instead of the page's when given (a
    directive in an included file names that file); the state keeps the page's.
    ``behind_reason``: why the page keeps this citation behind its pin, if it says."""
    shown: Any = where or location
    docname = env.docname
    state = upstream_state(env)
    if res.status in (ERROR, DRIFT):
        subtype = "drift" if res.status == DRIFT else "error"
        logger.error(
            "upstream %s '%s': %s", kind, res.raw, res.message,
            location=shown, type="upstream", subtype=subtype,
        )  # fmt: skip
        state.errors.setdefault(docname, []).append((location[1], f"{res.raw}: {res.message}"))
    elif res.status == MISSING:
        logger.warning(
            "upstream %s '%s': %s", kind, res.raw, res.message,
            location=shown, type="upstream", subtype="missing",
        )  # fmt: skip
        state.missing.add(docname)
    if res.status in (OK, MISSING) and not behind_reason:
        warn_if_behind(env, res, location)
    if res.upstream is not None:  # the page depends on this upstream's pin (see outdated)
        state.pins.setdefault(docname, {})[res.upstream.name] = res.upstream.pin
    if res.new_entry and res.key and res.entry:
        state.new.setdefault(docname, {})[res.key] = (res.entry.blob, res.entry.sha256)
    if res.rev_key and res.commit and res.status in (OK, DRIFT):
        state.new.setdefault(docname, {})[REV_PREFIX + res.rev_key] = (res.commit, "")
    lockcheck.record(env, res, location[1])


def warn_if_behind(env: BuildEnvironment, res: Resolution, location: tuple[str, int]) -> None:
    """``upstream.behind``: the citation reads a commit older than its upstream's pin."""
    up, spec = res.upstream, res.spec
    if not isinstance(up, Upstream) or spec is None or not spec.rev or not res.commit:
        return
    if not behind.may_be_behind(spec.rev):
        return  # a tag names a release on purpose (``demo@v1``); a bump leaves SHAs behind
    store = resolver(env).store(up)
    if not behind.is_behind(resolver(env).book_root, up, store, res.commit):
        return
    fix = command(resolver(env).paths, "review", up.name)
    logger.warning(
        "%s", behind.message(res.raw, up, fix),
        location=location, type="upstream", subtype="behind",
    )  # fmt: skip


def citation_attributes(res: Resolution) -> dict[str, Any]:
    """What other features read of a citation, as attributes of its link (the PDF's index,
    :mod:`atlas.latex.index`): the caption's words may change, these do not.

    ``upstream`` (its name), ``upstream_path`` (the path shown and linked), ``upstream_commit``
    (the commit cited or read, when it is one: a package upstream is cited at a version) and
    ``upstream_lines`` (first and last line, unless the whole file is cited)."""
    assert res.spec is not None
    found: dict[str, Any] = {CITED_UPSTREAM: res.spec.name, CITED_PATH: res.path}
    rev = res.commit or res.spec.rev
    if rev and is_commit(rev):
        found[CITED_COMMIT] = rev
    if res.span and not res.whole_file:
        found[CITED_LINES] = res.span
    return found


def caption_node(res: Resolution, title: str | None) -> nodes.caption:
    """The caption: optional title, then ``NAME@sha · path · L10–L40`` linking to GitHub.

    The link is a plain ``reference`` with ``refuri``, so LaTeX keeps it (footnote or URL).
    """
    label = res.caption()
    ref = nodes.reference(
        label,
        label,
        refuri=res.permalink or "",
        classes=["upstream-permalink"],
        **citation_attributes(res),
    )
    children: list[nodes.Node] = []
    if title:
        children += [nodes.Text(title), nodes.Text(" \u2014 ")]
    children.append(ref)
    return nodes.caption((title + " \u2014 " if title else "") + label, "", *children)


def citation_block(
    res: Resolution, directive: SphinxDirective, title: str | None
) -> nodes.container:
    """A resolved citation as the reader sees it: the caption, then the numbered code."""
    wrapper = nodes.container(
        "",
        literal_block=True,
        classes=["literal-block-wrapper", "upstream-block", *directive.options.get("class", [])],
    )
    wrapper += caption_node(res, title)
    wrapper += code_blocks(
        res.segments,
        language=res.language,
        emphasize=res.emphasize,
        kind="upstream",
        directive=directive,
    )
    directive.set_source_info(wrapper)
    return wrapper


def placeholder(res: Resolution) -> nodes.admonition:
    """What a reader sees when the objects are absent: the citation and its permalink."""
    box = nodes.admonition(classes=["upstream-missing", "warning"])
    box += nodes.title("", "Upstream code not available in this build")
    para = nodes.paragraph()
    label = res.caption()
    para += nodes.literal(label, label)
    package = res.upstream if isinstance(res.upstream, PackageUpstream) else None
    para += nodes.Text(
        f" is not shown because the package {package.requirement} is not installed here. "
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
    option_spec: ClassVar[dict[str, Any]] = option_spec()

    def run(self) -> list[nodes.Node]:
        location = (self.env.docname, self.lineno)
        if self.content:
            res = Resolution(raw=self.arguments[0], status=ERROR)
            res.message = (
                "the upstream directive takes no content: upstream code is never pasted into "
                "pages; remove the lines inside the block"
            )
            report(self.env, res, location, "citation", self.get_location())
            return []
        options = {k: ("" if v is None else str(v)) for k, v in self.options.items()}
        reason = options.pop("behind", None)
        options = {k: v for k, v in options.items() if k not in ("name", "class", "caption")}
        res = resolver(self.env).resolve(self.arguments[0], options)
        report(self.env, res, location, "citation", self.get_location(), behind_reason=reason)
        if res.status in (ERROR, DRIFT):
            return []
        if res.status == MISSING:
            return [placeholder(res)]
        wrapper = citation_block(res, self, self.options.get("caption"))
        self.add_name(wrapper)
        return [wrapper]


class UpstreamRole(SphinxRole):
    """``{upstream}`NAME@REV PATH:SELECTOR``: a checked link labelled ``file.py:L10–L40``, or
    ``path/file.py::Class.method`` for a symbol (its lines in the title and the permalink)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        location = self.get_location_tuple()
        res = resolver(self.env).resolve(self.text, {})
        source = self.get_source_info()[0]
        reasons = behind.role_reasons(_page_lines(self.env, str(source))) if source else {}
        report(self.env, res, location, "reference", behind_reason=reasons.get(self.text.strip()))
        if res.status in (ERROR, DRIFT) or res.spec is None:
            return [
                nodes.literal(self.rawtext, self.text, classes=["upstream-ref", "upstream-broken"])
            ], []
        # a symbol reads as what it is, path::Class.method; its lines are in the title (the
        # caption, NAME@sha · path · L12–L92) and in the permalink (#L12-L92)
        spec = res.spec
        label = f"{spec.path}{spec.selector}" if spec.is_symbol else res.label()
        ref = nodes.reference(
            self.rawtext,
            "",
            refuri=res.permalink or "",
            classes=["upstream-ref"],
            **citation_attributes(res),
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
        lines = _page_lines(self.env, str(source)) if source else []
        for i in range(max(line - 1, 0), min(len(lines), max(line - 1, 0) + 500)):
            if first and first in lines[i]:
                return self.env.docname, i + 1
        return self.env.docname, line


PAGE_LINES = "atlas_upstream_page_lines"  # temp_data: (source, its lines), for one page


def _page_lines(env: BuildEnvironment, source: str) -> list[str]:
    """The lines of the source being read, read once per page. Kept in ``env.temp_data``, which
    Sphinx empties after each page, so nothing outlives the page (or goes stale)."""
    cached = env.temp_data.get(PAGE_LINES)
    if cached is None or cached[0] != source:
        try:
            lines = Path(source).read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        cached = env.temp_data[PAGE_LINES] = (source, lines)
    return cached[1]


def build_finished(app: Sphinx, exception: BaseException | None) -> None:
    """Record new lock entries, then fail the build if any citation was wrong."""
    if exception is not None or app.env is None:
        return
    env = app.env
    paths = BookPaths.from_app(app)
    state = upstream_state(env)
    new = state.new
    if new and UpstreamConfig.of(app).lock == "update":
        from atlas.upstream.lock import LockEntry, load_lock, load_revs, save_lock

        root = paths.root
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
        new.clear()
    lockcheck.finish(app, env, paths, UpstreamConfig.of(app).lock == "frozen")
    errors = state.errors
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
