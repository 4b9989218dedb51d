"""The upstream directive and role, built in fixture books against fixture git repositories."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from gitfixtures import FixtureUpstream, stores_dir
from upstream_demo import make_polyglot, upstream_book

ROOTS = Path(__file__).resolve().parents[1] / "roots"
VLLM_URL = "https://github.com/vllm-project/vllm"


def make_fixture_book(
    tmp_path: Path, demo, pages: dict[str, str] | None = None, pin: str | None = None
) -> Path:
    return upstream_book(
        tmp_path / "book", pages, {"demo": FixtureUpstream(demo, pin=pin or demo.head)}
    )


_LIVE: list = []


def build(make_app, root: Path, stores: Path | None, **kwargs):
    """A fresh app for the fixture book (the previous one is cleaned up first, so docutils
    registrations do not pile up across builds in one test)."""
    while _LIVE:
        _LIVE.pop().cleanup()
    overrides = {"atlas_upstreams_root": str(stores) if stores else str(root / "no-stores")}
    overrides.update(kwargs.pop("confoverrides", {}))
    app = make_app("html", srcdir=root, freshenv=True, confoverrides=overrides, **kwargs)
    _LIVE.append(app)
    return app


def warnings_of(app) -> list[str]:
    """Warning and error lines, colour codes removed."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", app.warning.getvalue())
    return [
        line
        for line in text.splitlines()
        if re.search(r"(WARNING|ERROR):", line) and "[upstream.summary]" not in line
    ]


def errors_by_line(app) -> dict[int, str]:
    found: dict[int, str] = {}
    for line in warnings_of(app):
        match = re.search(r"index\.md:(\d+): ERROR: (.*)$", line)
        assert match, f"not an error at a page line: {line}"
        assert int(match.group(1)) not in found, f"two errors for line {match.group(1)}"
        found[int(match.group(1))] = match.group(2)
    return found


def upstream_nodes(app, docname: str = "index") -> str:
    """The doctree of the upstream blocks and links of a page, for snapshots."""
    from docutils import nodes

    tree = app.env.get_doctree(docname)
    out = []
    for node in tree.findall(nodes.Element):
        if "upstream-block" in node.get("classes", []) or "upstream-ref" in node.get("classes", []):
            out.append(node.pformat())
    return "\n".join(out)


# -- the good page ----------------------------------------------------------------------------
def test_every_selector_and_option_renders_with_upstream_numbers(
    make_app, tmp_path, demo, stores, file_regression
) -> None:
    root = make_fixture_book(tmp_path, demo)
    app = build(make_app, root, stores)
    app.build()
    assert warnings_of(app) == []
    # tests/upstream/test_upstream_directive/index_doctree.txt (`pytest --force-regen` rewrites it)
    file_regression.check(upstream_nodes(app), basename="index_doctree", extension=".txt")
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    pin = demo.head
    # upstream numbering, caption and permalink
    assert f'href="https://github.com/fixture/demo/blob/{pin}/pkg/net.py#L8-L9"' in html
    assert f"demo&#64;{pin[:8]} · pkg/net.py · L8–L9" in html
    assert '<span class="linenos">17</span>    <span class="nd">@functools' in html  # decorator
    # two ranges at the tag v1: old path, gap shown, numbering restarts at 18, emphasis on 19
    assert f"/blob/{demo.tags['v1']}/pkg/model.py#L1-L20" in html
    assert "⋮ 14 lines not shown (L4–L17)" in html and "⋮ 1 line not shown (L12)" in html
    assert '<span class="hll"><span class="linenos">19</span>' in html
    # C++ method inside a class inside a namespace; CUDA kernel with its template head
    assert "/csrc/ops.cpp#L8-L10" in html and "/kernels/add.cu#L4-L8" in html
    # options: start-after, end-before @2, dedent, emphasize (upstream numbering), caption, name
    assert 'id="forward-pass"' in html and "The forward pass — " in html
    assert '<span class="linenos">24</span><span class="n">y</span>' in html  # dedented
    assert "L24–L27" in html and '<span class="hll"><span class="linenos">25</span>' in html
    # markup in upstream code is text
    assert "&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in html and "</script><b>bold" not in html
    # CJK comments survive
    assert "构建模型: 中文注释" in html
    # the in-tree symlink is followed and linked where the lines are
    assert f"/blob/{pin}/pkg/net.py#L3" in html
    # roles: checked links with short labels; an example in inline code is left alone
    assert '<span class="pre">net.py:L8–L9</span>' in html
    assert '/pkg/net.py#L23-L28" title=' in html
    assert "shown.py" in html and "shown.py:1" not in load_lock_keys(root)
    lock = (root / "upstreams.lock").read_text()
    assert "demo@v1" in lock
    assert "pkg/net.py::Model [start-after=def forward;end-before=return @2;dedent]" in lock


def load_lock_keys(root: Path) -> str:
    return "\n".join((root / "upstreams.lock").read_text().splitlines())


# -- errors -----------------------------------------------------------------------------------
ERRORS = {
    3: ("demo nope/missing.py:1", "", "there is no folder 'nope'"),
    6: ("demo pkg/nett.py:1", "", "nearest in pkg: net.py"),
    9: ("demo pkg/net.py:30-50", "", "which has 42 lines"),
    12: ("demo pkg/net.py::Model.forwrd", "", "nearest: Model.forward"),
    15: ("demo@deadbeef pkg/net.py:1", "", "commits that exist: the pin"),
    18: ("demo@--upload-pack=x pkg/net.py:1", "", "neither a commit SHA"),
    21: ("demo /etc/passwd", "", "absolute"),
    24: ("demo ../outside.py", "", "'..'"),
    27: ("demo escape.py:1", "", "points outside the repository"),
    30: ("nosuch pkg/net.py:1", "", "unknown upstream 'nosuch'; known: demo, vllm"),
    33: (
        "demo pkg/net.py:8-9",
        ":contains: lambda\n",
        ":contains: 'lambda' is not in the selection",
    ),
    37: ("demo long.txt", "", "has 500 lines, more than the 400"),
    40: ("demo blob.bin", "", "binary"),
    43: ("demo pkg/net.py:8-9", ":emphasize-lines: 20\n", "20 not among the lines shown (8-9)"),
    47: ("demo pkg/net.py::Model", ":end-before: nothere\n", "'nothere' (occurrence 1) not found"),
    51: ("demo pkg/net.py::helper", "", "takes no content"),
    55: ("demo csrc/ops.cpp::twice2", "", "nearest: ops::twice"),
    58: ("demo pkg/net.py::Pair.x", "", "ambiguous in pkg/net.py: 2 definitions"),
    61: ("vllm vllm/engine.py:1", "", "link-only upstream"),
    64: ("demo pkg/net.py:1-5,3-9", "", "list ranges in ascending order"),
    67: ("demo kernels/add.cu::add_kernel", ":dedent: 4\n", ":dedent: 4 would cut code"),
}


ROLE_LINE = "then the role {upstream}`demo pkg/net.py:99` ends it."


def error_page() -> str:
    lines = ["# Errors", ""]
    for lineno, (spec, options, _) in sorted(ERRORS.items()):
        while len(lines) < lineno - 1:
            lines.append("")
        lines.append(f"```{{upstream}} {spec}")
        lines += options.splitlines()
        if "helper" in spec and spec.endswith("::helper"):
            lines.append("def pasted(): pass")
        lines.append("```")
    lines += ["", "A paragraph whose role is not on its first line:", ROLE_LINE, ""]
    return "\n".join(lines)


def test_each_bad_citation_is_one_error_at_its_line(make_app, tmp_path, demo, stores) -> None:

    page = error_page()
    role_line = page.splitlines().index(ROLE_LINE) + 1
    root = upstream_book(tmp_path / "book", {"index.md": page}, {
        "demo": FixtureUpstream(demo, pin=demo.head),
        "vllm": FixtureUpstream(None, url=VLLM_URL, link_only_pin="156b1266"),
    })  # fmt: skip
    app = build(make_app, root, stores)
    app.build()
    assert app.statuscode == 1
    assert f"{len(ERRORS) + 1} upstream citation" in app.warning.getvalue()
    found = errors_by_line(app)
    assert sorted(found) == sorted([*ERRORS, role_line])
    for lineno, (_, _, message) in ERRORS.items():
        assert message in found[lineno], (lineno, found[lineno])
        assert found[lineno].endswith("[upstream.error]")
    assert "lines 99-99 run past the end of pkg/net.py, which has 42 lines" in found[role_line]
    assert not (root / "upstreams.lock").exists()  # nothing wrong is ever locked


# -- offline, cache, lock ---------------------------------------------------------------------
def online_then(make_app, tmp_path, demo, stores, pages=None):
    """Build once with objects (fills the cache and the lock); return the book root."""
    root = make_fixture_book(tmp_path, demo, pages)
    app = build(make_app, root, stores)
    app.build()
    assert warnings_of(app) == []
    return root


def test_offline_without_cache_shows_placeholders_and_only_missing_warnings(
    make_app, tmp_path, demo, stores
) -> None:
    root = online_then(make_app, tmp_path, demo, stores)
    shutil.rmtree(root / "snippets_cache")
    app = build(make_app, root, None)
    app.build()
    warnings = warnings_of(app)
    assert len(warnings) == 12
    assert all(w.endswith("[upstream.missing]") and "WARNING" in w for w in warnings)
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert html.count("Upstream code not available in this build") == 10
    assert f"https://github.com/fixture/demo/blob/{demo.head}/pkg/net.py#L8-L9" in html
    assert "Read it on GitHub" in html and '<span class="pre">upstreams</span>' in html
    # what `make check` does: -W with upstream.missing allowed passes
    strict = build(
        make_app, root, None, warningiserror=True,
        confoverrides={"suppress_warnings": ["upstream.missing"]},
    )  # fmt: skip
    strict.build()
    assert strict.statuscode == 0


def test_offline_with_cache_shows_the_code(make_app, tmp_path, demo, stores) -> None:
    root = online_then(make_app, tmp_path, demo, stores)
    app = build(make_app, root, None)
    app.build()
    assert warnings_of(app) == []
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "Upstream code not available" not in html
    assert "构建模型: 中文注释" in html


def test_offline_citation_without_lock_entry_is_an_error(make_app, tmp_path, demo, stores) -> None:

    root = online_then(make_app, tmp_path, demo, stores)
    (root / "index.md").write_text("# P\n\n```{upstream} demo pkg/net.py:1-2\n```\n")
    app = build(make_app, root, None)
    app.build()
    assert app.statuscode == 1
    assert "never checked against real code" in errors_by_line(app)[3]


def test_corrupt_cache_entry_is_dropped_and_rebuilt(make_app, tmp_path, demo, stores) -> None:
    root = online_then(make_app, tmp_path, demo, stores)
    entries = sorted((root / "snippets_cache").rglob("*.json"))
    assert len(entries) == 11
    entries[0].write_bytes(entries[0].read_bytes()[:-7])  # truncated
    entries[1].write_bytes(entries[1].read_bytes().replace(b"return", b"retune"))  # edited
    app = build(make_app, root, None)  # offline: the two bad entries become placeholders
    app.build()
    warnings = warnings_of(app)  # two entries; one may serve both the directive and a role
    assert 2 <= len(warnings) <= 4 and all(w.endswith("[upstream.missing]") for w in warnings)
    assert not entries[0].exists() and not entries[1].exists()
    app = build(make_app, root, stores)  # online: rebuilt
    app.build()
    assert warnings_of(app) == [] and entries[0].exists() and entries[1].exists()
    assert not [p for p in (root / "snippets_cache").rglob(".tmp-*")]


def test_lock_mismatch_is_a_drift_error(make_app, tmp_path, demo, stores) -> None:
    import json

    root = online_then(make_app, tmp_path, demo, stores)
    lock = json.loads((root / "upstreams.lock").read_text())
    key = f"demo@{demo.head} pkg/net.py:8-9"
    lock["citations"][key]["sha256"] = "0" * 64
    (root / "upstreams.lock").write_text(json.dumps(lock))
    app = build(make_app, root, stores)
    app.build()  # the directive and the role cite the same lines
    assert app.statuscode == 1 and "2 upstream citation" in app.warning.getvalue()
    errors = errors_by_line(app)
    assert "no longer matches upstreams.lock" in errors[5] and errors[5].endswith(
        "[upstream.drift]"
    )


def test_frozen_lock_refuses_new_citations(make_app, tmp_path, demo, stores) -> None:

    root = make_fixture_book(tmp_path, demo, {"index.md": "# P\n\n{upstream}`demo pkg/net.py:8`\n"})
    app = build(make_app, root, stores, confoverrides={"atlas_upstream_lock": "frozen"})
    app.build()
    assert app.statuscode == 1
    assert "lock is frozen" in errors_by_line(app)[3]


def test_initialised_submodule_is_read_without_a_stores_folder(make_app, tmp_path, demo) -> None:
    root = upstream_book(
        tmp_path / "book", {"index.md": "# P\n\n```{upstream} demo@v1 pkg/model.py::helper\n```\n"},
        {"demo": FixtureUpstream(demo, pin=demo.head, init=True)},
    )  # fmt: skip
    app = build(make_app, root, None, confoverrides={"exclude_patterns": ["_build", "upstreams"]})
    app.build()
    assert warnings_of(app) == []
    assert "pkg/model.py#L6-L7" in (Path(app.outdir) / "index.html").read_text()


def test_parallel_build_merges_errors_and_lock_entries(make_app, tmp_path, demo, stores) -> None:

    pages = {"index.md": "# Book\n\n```{toctree}\n:glob:\n\np*\n```\n"}
    for i in range(1, 9):
        pages[f"p{i}.md"] = f"# Page {i}\n\n```{{upstream}} demo pkg/net.py:{i}-{i + 1}\n```\n"
    pages["p8.md"] = "# Page 8\n\n```{upstream} demo pkg/net.py:41-43\n```\n"
    root = make_fixture_book(tmp_path, demo, pages)
    app = build(make_app, root, stores, parallel=2)
    app.build()
    assert app.statuscode == 1 and "1 upstream citation" in app.warning.getvalue()
    assert "p8.md:3" in app.warning.getvalue()
    from atlas.upstream.lock import load_lock

    assert len(load_lock(root)) == 7
    assert len(list((root / "snippets_cache").rglob("*.json"))) == 7


def test_latex_caption_keeps_the_permalink(make_app, tmp_path, demo, stores) -> None:
    root = make_fixture_book(
        tmp_path, demo, {"index.md": "# P\n\n```{upstream} demo pkg/net.py:8-9\n```\n"}
    )
    overrides = {"atlas_upstreams_root": str(stores)}
    app = make_app("latex", srcdir=root, freshenv=True, confoverrides=overrides)
    app.build()
    tex = next(Path(app.outdir).glob("*.tex")).read_text(encoding="utf-8")
    assert f"https://github.com/fixture/demo/blob/{demo.head}/pkg/net.py\\#L8-L9" in tex
    assert "firstnumber=8" in tex  # upstream numbering in the PDF too


def test_the_pdf_index_lists_every_cited_file(make_app, tmp_path, demo, stores) -> None:
    """Each citation at a commit, block or inline, adds an index entry under its upstream and
    file (atlas.latex.index reads them from the citation's attributes): an empty index fails."""
    page = (
        "# P\n\n```{upstream} demo pkg/net.py:8-9\n:caption: A title before the citation\n```\n\n"
        "See {upstream}`demo@v1 pkg/model.py:1-2`.\n"
    )
    root = make_fixture_book(tmp_path, demo, {"index.md": page})
    overrides = {"atlas_upstreams_root": str(stores)}
    app = make_app("latex", srcdir=root, freshenv=True, confoverrides=overrides)
    app.build()
    tex = next(Path(app.outdir).glob("*.tex")).read_text(encoding="utf-8")
    assert warnings_of(app) == []
    files = re.findall(r"\\index\{demo \(upstream code\)@[^!]*!([^@]*)@", tex)
    assert files == ["pkg/net.py", "pkg/model.py"], tex


def test_moving_a_pin_rereads_the_pages_that_cite_it(make_app, tmp_path, demo, stores) -> None:
    from gitfixtures import git

    pages = {"index.md": "# P\n\n```{upstream} demo pkg/model.py:1\n```\n"}
    root = make_fixture_book(tmp_path, demo, pages, pin=demo.commits[1])
    app = build(make_app, root, stores)
    app.build()
    assert warnings_of(app) == []
    git(root, "update-index", "--cacheinfo", f"160000,{demo.tags['v1']},upstreams/demo")
    app = make_app("html", srcdir=root, confoverrides={"atlas_upstreams_root": str(stores)})
    _LIVE.append(app)
    app.build()  # not a fresh env: only the moved pin makes the unchanged page outdated
    html = (Path(app.outdir) / "index.html").read_text()
    assert f"/blob/{demo.tags['v1']}/pkg/model.py#L1" in html


# -- TypeScript and Rust symbols (tests/upstream_demo.py: make_polyglot) ---------------------
def test_typescript_and_rust_symbols_render_with_upstream_lines(make_app, tmp_path) -> None:
    repo = make_polyglot(tmp_path / "agentsrc")
    stores = stores_dir(tmp_path / "stores", {"agentsrc": repo})
    good = [
        ("src/loop.ts::Loop", 2, 9),
        ("src/loop.ts::Loop.step", 5, 8),
        ("src/loop.ts::dispatch", 11, 13),
        ("src/sandbox.rs::Sandbox", 2, 4),
        ("src/sandbox.rs::Sandbox::spawn", 7, 9),
        ("src/sandbox.rs::Sandbox::drop", 13, 15),  # in `impl Drop for Sandbox`
        ("src/sandbox.rs::Sandbox::Drop", 12, 16),  # the whole trait impl
        ("src/sandbox.rs::api::boot", 19, 21),
    ]
    page = "# P\n\n" + "".join(f"```{{upstream}} agentsrc {spec}\n```\n\n" for spec, _, _ in good)
    page += "```{upstream} agentsrc src/sandbox.rs::Sandbox::spwan\n```\n"
    root = upstream_book(
        tmp_path / "book", {"index.md": page}, {"agentsrc": FixtureUpstream(repo, pin=repo.head)}
    )
    app = build(make_app, root, stores)
    app.build()
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    for spec, start, end in good:
        path = spec.split("::", 1)[0]
        assert f"/blob/{repo.head}/{path}#L{start}-L{end}" in html, spec
    errors = [line for line in warnings_of(app) if "ERROR" in line]
    assert len(errors) == 1 and "nearest: Sandbox::spawn" in errors[0], errors
