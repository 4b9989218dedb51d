"""Snapshots of what the ``upstream`` directive and role render, one per documented form.

Like sphinx-design's snippet tests: every selector kind and option that CONTRIBUTING.md
("Quoting upstream code") documents is a small page of one fixture book, built once for the
whole module against fixture repositories (tests/upstream_demo.py: ``demo`` and ``polyglot``);
its doctree and its HTML are compared with the files in tests/upstream/test_upstream_snapshots/.
Each file starts with the page's source, so a reader sees the citation next to what it renders.

A changed rendering fails here; when the change is meant (or Sphinx, docutils or Pygments
were upgraded), rewrite the files with ``pytest tests/upstream/test_upstream_snapshots.py
--force-regen`` and review their diff before committing it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
from docutils import nodes
from gitfixtures import FixtureRepo, FixtureUpstream, git, stores_dir
from sphinx.testing.util import SphinxTestApp
from upstream_demo import make_polyglot, upstream_book


@dataclass(frozen=True)
class Snippet:
    """One page of the snapshot book: ``name`` is its file name, ``body`` its MyST source
    (``$V1``, ``$GROW`` and ``$HEAD`` stand for the demo's commits, known once it is made)."""

    name: str
    title: str
    body: str


def fence(citation: str, *options: str) -> str:
    """An ``upstream`` fence with its options (``"caption: The helper"``)."""
    return "\n".join([f"```{{upstream}} {citation}", *(f":{o}" for o in options), "```"])


SNIPPETS = [
    # -- selectors: lines and whole files
    Snippet("whole-file", "A whole file", fence("demo csrc/ops.h")),
    Snippet("whole-file-markdown", "A whole file in another language", fence("demo README.md")),
    Snippet("line", "One line", fence("demo pkg/net.py:8", "contains: def helper")),
    Snippet("line-range", "A line range", fence("demo pkg/net.py:8-9")),
    Snippet("line-ranges-gap-of-one", "Ranges one line apart", fence("demo pkg/net.py:8-11,13")),
    Snippet("line-ranges-gap", "Two ranges far apart", fence("demo@v1 pkg/model.py:1-3,18-20")),
    Snippet("symlink", "A line through an in-tree symlink", fence("demo link_model.py:3")),
    # -- selectors: Python symbols (ast)
    Snippet("python-function", "A Python function", fence("demo pkg/net.py::helper")),
    Snippet(
        "python-function-parens", "A symbol written name()", fence("demo pkg/net.py::helper()")
    ),
    Snippet("python-class", "A Python class", fence("demo pkg/net.py::Pair")),
    Snippet("python-method", "A Python method", fence("demo pkg/net.py::Model.forward")),
    Snippet(
        "python-method-decorated",
        "A decorated method, with CJK",
        fence("demo pkg/net.py::Model.build"),
    ),
    Snippet(
        "python-nested",
        "A method of a nested class",
        fence("polyglot py/outer.py::Outer.Inner.method"),
    ),
    Snippet("python-markup-text", "Code that looks like HTML", fence("demo pkg/net.py::helper2")),
    # -- selectors: C, C++ and CUDA symbols (tree-sitter)
    Snippet("c-function", "A C function", fence("polyglot csrc/list.c::list_push")),
    Snippet("c-struct", "A C struct", fence("polyglot csrc/list.c::list")),
    Snippet("cpp-function", "A function in a namespace", fence("demo csrc/ops.cpp::ops::twice")),
    Snippet(
        "cpp-method",
        "A method of a class in a namespace",
        fence("demo csrc/ops.cpp::ops::Accumulator::add"),
    ),  # fmt: skip
    Snippet(
        "cpp-trailing-name",
        "A C++ name by its trailing part",
        fence("demo csrc/ops.cpp::Accumulator::total"),
    ),  # fmt: skip
    Snippet(
        "cuda-kernel",
        "A CUDA kernel with its template head",
        fence("demo kernels/add.cu::add_kernel"),
    ),
    # -- selectors: TypeScript symbols (tree-sitter)
    Snippet("ts-class", "A TypeScript class", fence("polyglot src/loop.ts::Loop")),
    Snippet("ts-method", "A TypeScript method", fence("polyglot src/loop.ts::Loop.step")),
    Snippet("ts-field", "A TypeScript class field", fence("polyglot src/loop.ts::Loop.turns")),
    Snippet(
        "ts-const-arrow", "An exported arrow function", fence("polyglot src/loop.ts::dispatch")
    ),
    Snippet("ts-interface", "A TypeScript interface", fence("polyglot src/tools.ts::Tool")),
    Snippet("ts-type-alias", "A TypeScript type alias", fence("polyglot src/tools.ts::ToolName")),
    Snippet("ts-enum", "A TypeScript enum", fence("polyglot src/tools.ts::Mode")),
    Snippet(
        "ts-namespace-member", "A namespace member", fence("polyglot src/tools.ts::tools.list")
    ),
    Snippet(
        "ts-decorated-method", "A decorated method", fence("polyglot src/tools.ts::Registry.run")
    ),
    Snippet(
        "ts-overloads",
        "A function with overload signatures (not definitions)",
        fence("polyglot src/tools.ts::format"),
    ),  # fmt: skip
    Snippet("tsx-function", "A TSX component", fence("polyglot src/badge.tsx::Badge")),
    Snippet("mts-function", "A function of an .mts module", fence("polyglot src/clamp.mts::clamp")),
    # -- selectors: Rust symbols (tree-sitter)
    Snippet("rust-struct", "A Rust struct", fence("polyglot src/sandbox.rs::Sandbox")),
    Snippet(
        "rust-struct-attributes", "A struct with its attributes", fence("polyglot src/vm.rs::Vm")
    ),
    Snippet(
        "rust-impl-method",
        "A method of impl Type",
        fence("polyglot src/sandbox.rs::Sandbox::spawn"),
    ),
    Snippet(
        "rust-trait-impl-method",
        "A method of impl Trait for Type",
        fence("polyglot src/sandbox.rs::Sandbox::drop"),
    ),  # fmt: skip
    Snippet(
        "rust-trait-impl-block",
        "A whole impl Trait for Type",
        fence("polyglot src/sandbox.rs::Sandbox::Drop"),
    ),  # fmt: skip
    Snippet(
        "rust-method-of-one-trait",
        "The method of one of two trait impls",
        fence("polyglot src/vm.rs::Vm::Display::fmt"),
    ),  # fmt: skip
    Snippet(
        "rust-module-fn",
        "A function in an inline module",
        fence("polyglot src/sandbox.rs::api::boot"),
    ),
    Snippet(
        "rust-crate-prefix",
        "A leading crate:: is dropped",
        fence("polyglot src/sandbox.rs::crate::api::boot"),
    ),  # fmt: skip
    Snippet("rust-enum", "A Rust enum", fence("polyglot src/vm.rs::Op")),
    Snippet(
        "rust-trait-provided-method",
        "A trait's provided method",
        fence("polyglot src/vm.rs::Run::go"),
    ),
    Snippet("rust-macro", "A macro_rules! macro", fence("polyglot src/vm.rs::op_count")),
    Snippet("rust-const", "A Rust const", fence("polyglot src/vm.rs::MAX_OPS")),
    Snippet("rust-static", "A Rust static", fence("polyglot src/vm.rs::NAME")),
    # -- @REV
    Snippet("rev-tag", "At a tag", fence("demo@v1 pkg/model.py::helper")),
    Snippet(
        "rev-short-sha",
        "At a short SHA",
        fence("demo@$GROW pkg/model.py::helper", "behind: the helper as it was is the point"),
    ),
    Snippet("rev-full-sha", "At a full SHA", fence("demo@$HEAD pkg/net.py:8-9")),
    # -- options
    Snippet("option-contains", "contains", fence("demo pkg/net.py:14-15", "contains: scale = 2")),
    Snippet(
        "option-start-after",
        "start-after",
        fence("demo pkg/net.py::Model", "start-after: def forward"),
    ),
    Snippet(
        "option-start-after-nth",
        "start-after, second occurrence",
        fence("demo pkg/net.py::Model", "start-after: return @2"),
    ),  # fmt: skip
    Snippet(
        "option-end-before", "end-before", fence("demo pkg/net.py::Model", "end-before: def build")
    ),
    Snippet(
        "option-end-before-nth",
        "end-before, second occurrence",
        fence("demo pkg/net.py::Model", "end-before: return @2"),
    ),  # fmt: skip
    Snippet(
        "option-dedent",
        "dedent to the common indent",
        fence("demo pkg/net.py::Model.forward", "dedent:"),
    ),
    Snippet(
        "option-dedent-n",
        "dedent by N columns",
        fence("demo pkg/net.py::Model.forward", "dedent: 2"),
    ),
    Snippet(
        "option-emphasize-lines",
        "emphasize-lines, in upstream numbering",
        fence("demo pkg/net.py::Model.forward", "emphasize-lines: 24,26-27"),
    ),  # fmt: skip
    Snippet(
        "option-emphasize-lines-ranges",
        "emphasize-lines across two ranges",
        fence("demo@v1 pkg/model.py:1-3,18-20", "emphasize-lines: 2,19"),
    ),  # fmt: skip
    Snippet(
        "option-language", "language", fence("demo kernels/add.cu::add_kernel", "language: cpp")
    ),
    Snippet("option-caption", "caption", fence("demo pkg/net.py::helper", "caption: The helper")),
    Snippet("option-name", "name", fence("demo pkg/net.py::helper", "name: helper-block")),
    Snippet("option-class", "class", fence("demo pkg/net.py::helper", "class: wide compact")),
    Snippet(
        "options-together",
        "Every option at once",
        fence(
            "demo pkg/net.py::Model",
            "start-after: def forward",
            "end-before: return @2",
            "dedent:",
            "emphasize-lines: 25",
            "caption: The forward pass",
            "contains: self.scale",
            "name: forward-pass",
            "class: wide",
        ),
    ),  # fmt: skip
    # -- the role
    Snippet("role-lines", "The role on a line range", "See {upstream}`demo pkg/net.py:8-9`."),
    Snippet(
        "role-symbol", "The role on a symbol", "See {upstream}`demo pkg/net.py::Model.forward`."
    ),
    Snippet("role-rev", "The role at a tag", "See {upstream}`demo@v1 pkg/model.py::helper`."),
    Snippet(
        "role-in-inline-code",
        "A role written in inline code is left alone",
        "Write `` {upstream}`demo pkg/net.py:1` `` in a page.",
    ),  # fmt: skip
    # -- objects absent: the placeholder (the lock has the entries, see offline_lock)
    Snippet(
        "placeholder",
        "Objects absent, no cache: the placeholder",
        fence("offline src/clamp.mts::clamp") + "\n\nSee {upstream}`offline src/clamp.mts:2-4`.",
    ),  # fmt: skip
]
OFFLINE = {"src/clamp.mts::clamp": (2, 4), "src/clamp.mts:2-4": (2, 4)}


def page_source(snippet: Snippet, demo: FixtureRepo) -> str:
    body = (
        snippet.body.replace("$GROW", demo.commits[1][:10])
        .replace("$HEAD", demo.head)
        .replace("$V1", demo.tags["v1"])
    )
    return f"# {snippet.title}\n\n{body}\n"


def offline_lock(root: Path, poly: FixtureRepo) -> None:
    """Lock entries for the ``offline`` citations: a build without their objects shows a
    placeholder only for a citation that was once checked (otherwise it is an error). The
    entries hold what a build with the objects would have recorded."""
    text = (poly.path / "src/clamp.mts").read_text(encoding="utf-8").splitlines()
    blob = git(poly.path, "rev-parse", f"{poly.head}:src/clamp.mts")
    citations = {}
    for selector, (start, end) in OFFLINE.items():
        path, sep, rest = selector.partition(":")
        shown = "\n".join(text[start - 1 : end])
        key = f"offline@{poly.head} {path}{sep}{rest}"
        citations[key] = {"blob": blob, "sha256": hashlib.sha256(shown.encode()).hexdigest()}
    lock = {"citations": citations, "version": 1}
    (root / "upstreams.lock").write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")


@pytest.fixture(scope="module")
def built(tmp_path_factory, demo):
    """The snapshot book, built once: every snippet is a page under snippets/."""
    base = tmp_path_factory.mktemp("snapshots")
    poly = make_polyglot(base / "polyglot")
    pages = {"index.md": "# Snippets\n\n```{toctree}\n:glob:\n\nsnippets/*\n```\n"}
    pages.update({f"snippets/{s.name}.md": page_source(s, demo) for s in SNIPPETS})
    root = upstream_book(base / "book", pages, {
        "demo": FixtureUpstream(demo, pin=demo.head),
        "polyglot": FixtureUpstream(poly, pin=poly.head),
        "offline": FixtureUpstream(poly, pin=poly.head),  # its objects are in no store
    })  # fmt: skip
    offline_lock(root, poly)
    stores = stores_dir(base / "stores", {"demo": demo, "polyglot": poly})
    warnings = StringIO()
    app = SphinxTestApp(
        "html",
        srcdir=root,
        confoverrides={"atlas_upstreams_root": str(stores)},
        status=StringIO(),
        warning=warnings,
    )
    app.build()
    yield app, re.sub(r"\x1b\[[0-9;]*m", "", warnings.getvalue()), root, base
    app.cleanup()


def page_doctree(app: SphinxTestApp, name: str) -> str:
    """The page's doctree below its title: what the directive and the role produced."""
    tree = app.env.get_doctree(f"snippets/{name}")
    section = next(iter(tree.findall(nodes.section)))
    return "".join(child.pformat() for child in section.children[1:])


def page_html(app: SphinxTestApp, name: str) -> str:
    """The HTML of the page's body section (no theme around it)."""
    html = (Path(app.outdir) / "snippets" / f"{name}.html").read_text(encoding="utf-8")
    match = re.search(r"<section [^>]*id=.*</section>", html, re.DOTALL)
    assert match, html
    return match.group(0) + "\n"


def test_every_option_of_the_directive_has_a_snippet() -> None:
    """A new option of the directive gets its snapshot here too."""
    from atlas.upstream.directive import UpstreamDirective

    given = {m for s in SNIPPETS for m in re.findall(r"^:([a-z-]+):", s.body, re.MULTILINE)}
    assert set(UpstreamDirective.option_spec) <= given


def test_the_snapshot_book_builds_with_only_the_placeholder_warnings(built) -> None:
    app, warnings, _, _ = built
    lines = [line for line in warnings.splitlines() if "WARNING" in line or "ERROR" in line]
    assert len(lines) == len(OFFLINE), warnings
    assert all("snippets/placeholder.md" in line for line in lines), warnings
    assert all(line.endswith("[upstream.missing]") for line in lines), warnings
    assert app.statuscode == 0


def no_machine_paths(text: str, *folders: Path) -> str:
    """A snapshot holds nothing of this machine: no temporary folder, no absolute path."""
    for folder in folders:
        assert str(folder) not in text and str(folder.resolve()) not in text
    assert "/tmp/" not in text and "file://" not in text
    return text


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.name)
def test_doctree(built, snippet: Snippet, demo, file_regression) -> None:
    app, _, root, base = built
    got = no_machine_paths(page_doctree(app, snippet.name), root, base, demo.path)
    source = "".join(
        f"    {line}".rstrip() + "\n" for line in page_source(snippet, demo).splitlines()
    )
    file_regression.check(
        f"snippets/{snippet.name}.md:\n{source}\ndoctree:\n{got}",
        basename=snippet.name,
        extension=".doctree.txt",
    )


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.name)
def test_html(built, snippet: Snippet, demo, file_regression) -> None:
    app, _, root, base = built
    got = no_machine_paths(page_html(app, snippet.name), root, base, demo.path)
    source = page_source(snippet, demo)
    assert "--" not in source  # it goes in an HTML comment
    file_regression.check(
        f"<!-- snippets/{snippet.name}.md:\n{source}-->\n{got}",
        basename=snippet.name,
        extension=".html",
    )
