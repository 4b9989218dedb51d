"""One Python file per page with labs: ``python page.py`` runs them at home, as doctests.

A reader who doubts a lab should be able to run it, change it and see it fail. The file holds
the page's labs verbatim, in order, with their page lines; it runs them in one namespace as
the build does (seeded, one thread, doctest's ELLIPSIS and NORMALIZE_WHITESPACE) and reports
each lab and a summary, exiting non-zero on a failure. It needs only the book's package
(``pip install -e .`` in a clone), not Sphinx; it seeds with that package's
:func:`atlas.processes.seed_everything`, as the build's workers do, rather than a copy of it.
The HTML build writes the files under ``_labs/`` and every lab box links to its page's file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes

from atlas.labs.imports import LABKIT, closure, lab_modules
from atlas.labs.model import LabSpec
from atlas.teach.notebook import file_name as notebook_file
from atlas.teach.notebook import write as write_notebook
from atlas.ui import _

OUTPUT_FOLDER = "_labs"
ALLOW_SKIPS = "ATLAS_LABS_ALLOW_SKIPS"  # the environment variable that accepts skipped labs

RUNNER = '''

class _Skip(Exception):
    """A lab raised unittest.SkipTest: what it needs is not here (its reason says what)."""


class _Runner(doctest.DocTestRunner):
    def report_unexpected_exception(self, out, test, example, exc_info):  # noqa: ANN001
        if isinstance(exc_info[1], unittest.SkipTest):
            raise _Skip(str(exc_info[1]) or "skipped by the lab")
        super().report_unexpected_exception(out, test, example, exc_info)


def main(argv: list[str]) -> int:
    import torch

    allow_skips = "--allow-skips" in argv or os.environ.get(ALLOW_SKIPS, "") not in ("", "0")

    module = types.ModuleType("__lab__")  # objects defined in labs pickle by reference
    sys.modules["__lab__"] = module
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for title, line, needs, expect_failure, text in LABS:
        if needs == "cuda" and not torch.cuda.is_available():
            print(f"SKIP  {title} (needs CUDA)")
            counts["skipped"] += 1
            continue
        seed_everything(0)  # as the build seeds each lab
        test = doctest.DocTestParser().get_doctest(text, module.__dict__, title, PAGE, line - 1)
        test.globs = module.__dict__  # the labs of a page share one namespace
        runner = _Runner(optionflags=flags)
        started = time.perf_counter()
        try:
            result = runner.run(test, clear_globs=False)
        except _Skip as skip:
            print(f"SKIP  {title}: {skip}")
            counts["skipped"] += 1
            continue
        seconds = time.perf_counter() - started
        failed = result.failed > 0
        if failed != expect_failure:
            print(f"FAIL  {title} ({seconds:.2f} s, {PAGE} line {line})")
            counts["failed"] += 1
        else:
            print(f"ok    {title} ({seconds:.2f} s)")
            counts["passed"] += 1
    print(", ".join(f"{n} {word}" for word, n in counts.items()))
    if counts["failed"]:
        return 1
    if counts["skipped"] and not allow_skips:
        # A skipped lab checked nothing: say so in the status too, unless the caller said that
        # skips are expected here (no GPU, no `make upstreams` yet).
        print(f"some labs were skipped; pass --allow-skips or set {ALLOW_SKIPS}=1 to accept")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''


def _literal(text: str) -> str:
    """The lab's text as a Python literal: a raw triple-quoted string when that is exact."""
    if "'''" not in text and not text.endswith("\\") and "\r" not in text:
        return "r'''" + text + "'''"
    return repr(text)


def needs_upstreams(specs: list[LabSpec], root: Path = LABKIT) -> bool:
    """Whether a lab reaches labkit code that reads upstream objects (nano-vllm at its pin)."""
    sources = [example.source for spec in specs for example in spec.examples]
    for file in closure(lab_modules(sources, root), root):
        if "atlas.upstream" in file.read_text(encoding="utf-8"):
            return True
    return False


def render(
    docname: str,
    title: str,
    page_path: str,
    specs: list[LabSpec],
    root: Path = LABKIT,
    shown_on: dict[str, str] | None = None,
) -> str:
    """The file's text for the labs of one page (``root``: the labkit folder they import from)."""
    upstream_note = ""
    if needs_upstreams(specs, root):
        upstream_note = (
            "\nSome labs run upstream code read from its git objects at the pinned commit. Fetch\n"
            "them first with `make upstreams` in the clone (a partial clone of each upstream);\n"
            "without them those labs are skipped and say so.\n"
        )
    head = f'''#!/usr/bin/env python3
"""The labs of "{title}" ({page_path}), LLM Infra Atlas.

Run them at home, in a clone of the book:

    pip install -e .
    python {docname.rsplit("/", 1)[-1]}.py

Each lab runs as doctests, in the page's order and in one namespace, as in the book's build
(seeded, doctest's ELLIPSIS and NORMALIZE_WHITESPACE). A failure is reported with the page
line of its example, and the script exits with status 1. A lab that cannot run here (no GPU,
upstream objects missing) is skipped with its reason, and the script then exits with status 2:
a skipped lab checked nothing. Pass --allow-skips (or set {ALLOW_SKIPS}=1) to exit 0 then.
{upstream_note}"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # as in the build: one thread, stable timings

import doctest  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
import unittest  # noqa: E402

from atlas.processes import seed_everything  # noqa: E402 - the book's package, installed

PAGE = {page_path!r}
ALLOW_SKIPS = {ALLOW_SKIPS!r}  # set to 1 (or pass --allow-skips) to exit 0 when labs skipped
# (title, first line in the page, needs, expect failure, the lab's doctest text)
LABS = [
'''
    if shown_on:
        # d2l's back-link: taught code these labs use is shown on the page named here.
        head += "# Taught code these labs use, shown on another page of the book:\n"
        head += "".join(f"#   {name}: {where}\n" for name, where in sorted(shown_on.items()))
    rows = []
    for spec in specs:
        rows.append(
            f"    (\n        {spec.title!r},\n        {spec.line},\n        {spec.needs!r},\n"
            f"        {spec.expect_failure!r},\n        {_literal(spec.text)},\n    ),\n"
        )
    return head + "".join(rows) + "]\n" + RUNNER


def file_name(docname: str) -> str:
    """``_labs/serving/paged-attention.py`` for page ``serving/paged-attention``."""
    return f"{OUTPUT_FOLDER}/{docname}.py"


def write_all(
    outdir: Path,
    specs: dict[str, list[LabSpec]],
    titles: dict[str, str],
    page_paths: dict[str, str],
    root: Path = LABKIT,
    shown_on: dict[str, dict[str, str]] | None = None,
) -> list[Path]:
    """Write every page's file (only when its text changed: reproducible, incremental)."""
    written = []
    for docname in sorted(specs):
        title = titles.get(docname, docname)
        backlinks = (shown_on or {}).get(docname)
        text = render(docname, title, page_paths[docname], specs[docname], root, backlinks)
        path = outdir / file_name(docname)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


# -- Sphinx: the files and the links from every lab box -----------------------------------------
def check_files(spec: LabSpec, root: Path) -> list[str]:
    """Labkit files (relative to ``root``) of the checking code this lab imports (names from
    modules that declare ``ROLE = "check"``)."""
    from atlas.labs.imports import source_imports
    from atlas.teach.taught import find_definition, role_of

    found: set[str] = set()
    for example in spec.examples:
        for item in source_imports(example.source):
            if item.name is None:
                continue
            definition = find_definition(item.module, item.name, root)
            if definition is not None and role_of(definition.module, root) == "check":
                found.add(definition.path)
    return sorted(found)


def add_lab_links(app: Any, doctree: nodes.document, docname: str) -> None:
    """HTML: under every lab, a link to the page's runnable file and to the checks it uses.

    Runs before atlas.labs renders the labs (which appends these nodes to each lab box).
    """
    from sphinx.util.osutil import relative_uri

    from atlas.labs.directive import lab_node
    from atlas.teach.config import labkit_root
    from atlas.teach.labcode import OUTPUT_FOLDER as LABKIT_FOLDER

    if app.builder.format != "html":
        return
    from atlas.teach.state import shown_state

    root = labkit_root(app.env)
    page = app.builder.get_target_uri(docname)
    links = shown_state(app.env).links.get(docname, {})
    for node in doctree.findall(lab_node):
        spec: LabSpec = node["spec"]
        para = nodes.paragraph(classes=["atlas-lab-links"])
        name = file_name(spec.docname)
        para += nodes.Text(_("Run at home: "))
        para += nodes.reference("", name.rsplit("/", 1)[-1], refuri=relative_uri(page, name))
        notebook = notebook_file(spec.docname)
        para += nodes.Text(" \u00b7 ")
        para += nodes.raw(  # a download: browsers would show a notebook's JSON as text
            "",
            f'<a class="reference external atlas-notebook" href="{relative_uri(page, notebook)}"'
            f" download>{notebook.rsplit('/', 1)[-1]}</a>",
            format="html",
        )
        checks = check_files(spec, root)
        if checks:
            para += nodes.Text(_(" \u00b7 checks: "))
            for i, path in enumerate(checks):
                if i:
                    para += nodes.Text(", ")
                uri = relative_uri(page, f"{LABKIT_FOLDER}/{path}")
                para += nodes.reference("", path, refuri=uri)
        shown_elsewhere = sorted(
            (name, home) for (lab, name), home in links.items() if lab == spec.title
        )
        if shown_elsewhere:
            para += nodes.Text(_(" \u00b7 shown on: "))
            for i, (name, (other, _line)) in enumerate(shown_elsewhere):
                if i:
                    para += nodes.Text(", ")
                uri = app.builder.get_relative_uri(docname, other)
                para += nodes.reference("", f"{name} ({other})", refuri=uri)
        node["atlas_links"] = [para, how_to_run(app, name.rsplit("/", 1)[-1])]


def how_to_run(app: Any, file: str) -> nodes.paragraph:
    """Under the links: how to get the book and run the file (``git clone``, ``make setup``, the
    command). With no repository address set, the clone names a placeholder for it."""
    from atlas.project.checkout import repository

    repo = repository(app)
    address = repo.url if repo is not None else _("<the book's repository address>")
    folder = repo.name if repo is not None else _("<its folder>")
    para = nodes.paragraph(classes=["atlas-run-at-home"])
    para += nodes.Text(_("To run it, get the book: "))
    para += nodes.literal("", f"git clone {address}")
    para += nodes.Text(", ")
    para += nodes.literal("", f"cd {folder}")
    para += nodes.Text(", ")
    para += nodes.literal("", "make setup")
    para += nodes.Text(_("; then, with the file saved in that folder: "))
    para += nodes.literal("", f".venv/bin/python {file}")
    return para


def write_files(app: Any, exception: BaseException | None) -> None:
    """At the end of an HTML build: one runnable file per page with labs, under ``_labs/``."""
    import os

    if exception is not None or app.builder.format != "html":
        return
    env = app.env
    from atlas.labs.state import labs_state  # atlas.labs is loaded with atlas.teach
    from atlas.teach.config import labkit_root
    from atlas.teach.state import shown_state

    specs: dict[str, list[LabSpec]] = labs_state(env).specs
    titles = {d: env.titles[d].astext() for d in specs if d in env.titles}
    paths = {d: os.path.relpath(env.doc2path(d), app.confdir) for d in specs}
    shown_on = {
        docname: {
            name: f"{os.path.relpath(env.doc2path(other), app.confdir)}, line {line}"
            for (_page, name), (other, line) in links.items()
        }
        for docname, links in shown_state(env).links.items()
    }
    write_all(Path(app.outdir), specs, titles, paths, labkit_root(app), shown_on)
    for docname in sorted(specs):
        write_notebook(Path(app.outdir), docname, titles.get(docname, docname), paths[docname],
                       specs[docname])  # fmt: skip
