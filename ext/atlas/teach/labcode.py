"""The ``labcode`` directive and role: our own lab code on the page, numbered as in its file.

A lab proves a claim with code from ``atlas.labkit``; a reader must be able to see that code.
``labcode`` quotes it with the selector machinery of ``upstream`` (``path::Class.method``, line
ranges, ``:contains:``, ``:start-after:`` ...) and renders it as ``upstream`` does
(:mod:`atlas.code.codeblocks`: numbered blocks, the same elision lines), so the two read
alike, but from the working tree instead of git objects: the code is ours and changes with the
book. The page depends on the file (an edit re-renders it), the caption names file, symbol and
lines, and links to the file, which the HTML build copies into ``_labkit/`` so the link works
offline.

A wrong quotation is one error at its page and line with the fix, never a traceback.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole
from sphinx.util.osutil import relative_uri

from atlas.code.codeblocks import code_blocks
from atlas.code.options import option_spec
from atlas.code.select import (
    Segment,
    SelectError,
    apply_options,
    check_options,
    language_for,
    parse_emphasis,
    select,
    split_lines,
)
from atlas.code.spec import SpecError, line_ranges, parse_spec
from atlas.labs.imports import LABKIT
from atlas.project.checkout import checkout, repository
from atlas.teach.config import labkit_root
from atlas.teach.state import teach_state

logger = logging.getLogger(__name__)
OUTPUT_FOLDER = "_labkit"  # where the HTML build copies labkit's files
REPO_PREFIX = "ext/atlas/labkit/"  # the files' place in the repository
SYNTAX = "write PATH::name, PATH::Class.method or PATH:10-40, PATH relative to ext/atlas/labkit/"


class LabcodeError(ValueError):
    """A quotation that cannot be made; the message says what was found and the fix."""


@dataclass
class Quote:
    """What one ``labcode`` shows: the file, its selection and the lines kept."""

    raw: str
    path: str  # relative to the labkit folder, e.g. serving/paged_attention.py
    file: Path
    symbol: str | None
    segments: list[Segment]
    emphasize: list[int] = field(default_factory=list)

    @property
    def span(self) -> tuple[int, int]:
        return self.segments[0].start, self.segments[-1].end

    def lines_label(self) -> str:
        start, end = self.span
        return f"L{start}" if start == end else f"L{start}\u2013L{end}"

    def caption(self) -> str:
        """``ext/atlas/labkit/serving/paged_attention.py · paged_attention · L12–L40``."""
        parts = [f"{REPO_PREFIX}{self.path}"]
        if self.symbol:
            parts.append(self.symbol)
        parts.append(self.lines_label())
        return " \u00b7 ".join(parts)

    def label(self) -> str:
        """The role's short label: ``paged_attention.py::paged_attention`` or ``f.py:L3–L9``."""
        name = self.path.rsplit("/", 1)[-1]
        return f"{name}::{self.symbol}" if self.symbol else f"{name}:{self.lines_label()}"

    def shown_lines(self) -> list[tuple[int, int]]:
        return [(seg.start, seg.end) for seg in self.segments]


def labkit_files(root: Path) -> list[str]:
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "__pycache__" not in p.parts and p.is_file()
    )


def resolve(raw: str, options: dict[str, str], root: Path = LABKIT) -> Quote:
    """Parse ``PATH[::symbol | :lines]``, read the file, select, apply the options."""
    text = raw.strip()
    if not text or any(ch.isspace() for ch in text):
        raise LabcodeError(f"{raw!r} is not a labcode target; {SYNTAX}")
    if text.startswith(("atlas/labkit/", "ext/atlas/labkit/")):
        text = text.split("labkit/", 1)[1]
    try:
        spec = parse_spec(f"labkit {text}")
        check_options(options)
    except (SpecError, SelectError) as exc:
        raise LabcodeError(f"{exc}; {SYNTAX}") from None
    file = (root / spec.path).resolve()
    if not file.is_relative_to(root.resolve()):
        raise LabcodeError(f"{spec.path} is outside ext/atlas/labkit/; {SYNTAX}")
    if not file.is_file():
        known = labkit_files(root)
        near = difflib.get_close_matches(spec.path, known, n=3, cutoff=0.5)
        hint = f"; nearest: {', '.join(near)}" if near else f"; labkit has {len(known)} files"
        raise LabcodeError(f"ext/atlas/labkit/{spec.path} does not exist{hint}")
    try:
        source = file.read_text(encoding="utf-8")
        if not spec.is_symbol and line_ranges(spec.selector) is None:
            raise LabcodeError(
                f"{raw!r} quotes a whole file; quote a symbol (PATH::name) or a line range "
                f"(PATH:10-40) of its {len(split_lines(source))} lines"
            )
        segments = select(source, spec)
        segments = apply_options(segments, options)
        emphasize = (
            parse_emphasis(options["emphasize-lines"], segments)
            if options.get("emphasize-lines")
            else []
        )
    except SelectError as exc:
        raise LabcodeError(_ours(str(exc), spec.path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LabcodeError(f"cannot read ext/atlas/labkit/{spec.path}: {exc}") from None
    return Quote(text, spec.path, file, spec.symbol, segments, emphasize)


def _ours(message: str, path: str) -> str:
    """The selector's message, worded for a file of ours rather than one at an upstream pin."""
    message = message.replace(path, f"{REPO_PREFIX}{path}")
    message = message.replace(" against the file at this commit", " against the file")
    message = message.replace(
        "wrong for this commit: re-read the file at the pin", "wrong: re-read the file"
    )
    return message


# -- nodes --------------------------------------------------------------------------------------
def link_node(quote: Quote, label: str, classes: list[str]) -> nodes.reference:
    """A link to the quoted file; its target is set per builder at ``doctree-resolved``."""
    ref = nodes.reference(label, "", refuri="", classes=["labcode-link", *classes])
    ref["labcode_path"] = quote.path
    ref["reftitle"] = f"{REPO_PREFIX}{quote.path} ({quote.lines_label()})"
    return ref


def _note_error(
    env: Any, location: tuple[str, int], raw: str, message: str, where: str | None = None
) -> None:
    """Log at ``where`` (the directive's own file and line: an included file names itself)
    or the page; remember the page's line so that the page is re-read until fixed."""
    logger.error(
        "labcode '%s': %s", raw, message, location=where or location, type="labcode",
        subtype="error",
    )  # fmt: skip
    teach_state(env).labcode_errors.setdefault(location[0], []).append(location[1])


class LabcodeDirective(SphinxDirective):
    """```` ```{labcode} serving/paged_attention.py::paged_attention ````."""

    has_content = True  # refused with an error: our code is quoted, never pasted
    required_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = option_spec(
        without=["language", "behind"]
    )  # Python only; ours, never behind

    def run(self) -> list[nodes.Node]:
        location = (self.env.docname, self.lineno)
        raw = self.arguments[0].strip()
        if self.content:
            message = (
                "the labcode directive takes no content: it quotes the file; remove the lines "
                "inside the block"
            )
            _note_error(self.env, location, raw, message, self.get_location())
            return []
        options = {
            k: ("" if v is None else str(v))
            for k, v in self.options.items()
            if k not in ("name", "class", "caption")
        }
        root = labkit_root(self.env)
        try:
            quote = resolve(raw, options, root)
        except LabcodeError as exc:
            _note_error(self.env, location, raw, str(exc), self.get_location())
            candidate = root / raw.split("::")[0].split(":")[0]
            if candidate.is_file():
                self.env.note_dependency(str(candidate))  # fixing the file fixes the page
            return []
        self.env.note_dependency(str(quote.file))
        wrapper = nodes.container(
            "",
            literal_block=True,
            classes=["literal-block-wrapper", "labcode-block", *self.options.get("class", [])],
        )
        wrapper["labcode_path"] = quote.path
        wrapper["labcode_lines"] = quote.shown_lines()
        wrapper += self._caption(quote)
        wrapper += code_blocks(
            quote.segments,
            language=language_for(quote.path),
            emphasize=quote.emphasize,
            kind="labcode",
            directive=self,
        )
        self.set_source_info(wrapper)
        self.add_name(wrapper)
        return [wrapper]

    def _caption(self, quote: Quote) -> nodes.caption:
        title = self.options.get("caption")
        label = quote.caption()
        link = link_node(quote, label, ["labcode-caption-link"])
        link += nodes.Text(label)
        children: list[nodes.Node] = []
        if title:
            children += [nodes.Text(title), nodes.Text(" \u2014 ")]
        children.append(link)
        return nodes.caption((title + " \u2014 " if title else "") + label, "", *children)


class LabcodeRole(SphinxRole):
    """``{labcode}`serving/paged_attention.py::paged_attention```: a checked link to our code."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        docname, line = self.env.docname, self.lineno
        root = labkit_root(self.env)
        try:
            quote = resolve(self.text, {}, root)
        except LabcodeError as exc:
            _note_error(self.env, (docname, line), self.text, str(exc))
            return [nodes.literal(self.rawtext, self.text, classes=["labcode-ref", "broken"])], []
        self.env.note_dependency(str(quote.file))
        label = quote.label()
        ref = link_node(quote, self.rawtext, ["labcode-ref"])
        ref += nodes.literal(label, label)
        return [ref], []


# -- per-builder links and the copied files ---------------------------------------------------
def resolve_links(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """HTML: link to the copy in ``_labkit/``. Elsewhere: to the file at the repository's
    branch when ``atlas_repository_url`` is set, else the link becomes plain text (the caption
    already names the repository path)."""
    html = app.builder.format == "html"
    repo = repository(app)
    prefix = checkout(app).prefix
    for ref in list(doctree.findall(nodes.reference)):
        path = ref.get("labcode_path")
        if not path:
            continue
        if html:
            page = app.builder.get_target_uri(docname)
            ref["refuri"] = relative_uri(page, f"{OUTPUT_FOLDER}/{path}")
        elif repo is not None:
            ref["refuri"] = repo.file(prefix + REPO_PREFIX + path)
        else:
            text = nodes.inline("", "", *ref.children, classes=ref["classes"])
            ref.replace_self(text)


def copy_labkit(app: Sphinx, exception: BaseException | None) -> None:
    """Copy labkit's Python files into ``_labkit/`` of the HTML output (byte for byte)."""
    if exception is not None or app.builder.format != "html":
        return
    root = labkit_root(app.env)
    target = Path(app.outdir) / OUTPUT_FOLDER
    for name in labkit_files(root):
        dest = target / name
        data = (root / name).read_bytes()
        if dest.is_file() and dest.read_bytes() == data:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
