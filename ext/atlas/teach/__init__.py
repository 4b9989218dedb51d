"""atlas.teach: labs that teach. The code a lab runs is on its page; problems have answers
that the build checks; every page's labs can be run at home.

Modules, one job each:

- ``labcode``: the ``labcode`` directive and role (our labkit code, numbered as in its file);
- ``problems``: the ``problem`` and ``solution`` directives and the book's problem index;
- ``answers``: in the PDF, solutions gathered in an "Answers" section at each chapter's end;
- ``taught``: the check that a lab's taught imports are shown on its page;
- ``runnable``: one Python file per page that runs its labs as doctests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment

STATIC = Path(__file__).resolve().parent / "static"
ERROR_MAPS = ("atlas_labcode_errors", "atlas_teach_errors")


def _add_static(app: Sphinx, config: Config) -> None:
    if str(STATIC) not in [str(p) for p in config.html_static_path]:
        config.html_static_path.append(str(STATIC))


def _env_init(app: Sphinx, env: BuildEnvironment, docnames: list[str] | None = None) -> None:
    for attr in ERROR_MAPS:
        if not hasattr(env, attr):
            setattr(env, attr, {})


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _env_init(app, env)
    for attr in ERROR_MAPS:
        getattr(env, attr).pop(docname, None)


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    _env_init(app, env)
    for attr in ERROR_MAPS:
        mine, theirs = getattr(env, attr), getattr(other, attr, {})
        for docname in docnames:
            if docname in theirs:
                mine[docname] = theirs[docname]


def _outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Re-read pages that had an error: the file they quote or the lab may be fixed since,
    and an error must be reported again rather than go quiet in an incremental build."""
    _env_init(app, env)
    again: set[str] = set()
    for attr in ERROR_MAPS:
        again |= set(getattr(env, attr))
    return sorted((again & set(env.found_docs)) - removed)


def _build_finished(app: Sphinx, exception: BaseException | None) -> None:
    """A book that quotes wrong code must not publish, even from a build without ``-W``.

    A lab that uses taught code its page does not show is an error too, but only strict builds
    (``make check``, ``-W``) stop on it: a chapter being written still builds to be read.
    """
    if exception is not None or app.env is None:
        return
    _env_init(app, app.env)
    if app.env.atlas_labcode_errors:  # type: ignore[attr-defined]
        app.statuscode = 1


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.teach import labcode, problems, runnable, taught
    from atlas.teach.answers import AnswersAtChapterEnd
    from atlas.teach.config import TeachConfig

    app.setup_extension("sphinx_design")
    TeachConfig.register(app)
    app.add_directive("labcode", labcode.LabcodeDirective)
    app.add_role("labcode", labcode.LabcodeRole())
    app.add_node(problems.problem_index_node)
    app.add_directive("problem", problems.ProblemDirective)
    app.add_directive("solution", problems.SolutionDirective)
    app.add_directive("problem-index", problems.ProblemIndexDirective)
    app.add_env_collector(problems.ProblemsCollector)
    app.add_post_transform(AnswersAtChapterEnd)
    app.connect("env-check-consistency", problems.check_labels)
    app.connect("env-get-outdated", problems.outdated_indexes)
    app.connect("doctree-resolved", problems.fill_indexes)
    app.add_css_file("atlas-teach.css")
    app.connect("config-inited", _add_static)
    app.connect("env-before-read-docs", _env_init)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _outdated)
    app.connect("doctree-read", taught.check_page)
    app.connect("doctree-resolved", labcode.resolve_links)
    app.connect("doctree-resolved", runnable.add_lab_links, priority=400)  # before atlas.labs
    app.connect("build-finished", labcode.copy_labkit)
    app.connect("build-finished", runnable.write_files)
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
