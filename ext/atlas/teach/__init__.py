"""atlas.teach: labs that teach. The code a lab runs is on its page; problems have answers
that the build checks; every page's labs can be run at home.

Modules, one job each:

- ``config``: the settings (the labkit folder, the browsable repository);
- ``labcode``: the ``labcode`` directive and role (our labkit code, numbered as in its file,
  rendered by :mod:`atlas.code.codeblocks` as upstream citations are);
- ``problems``: the ``problem`` and ``solution`` directives (difficulty, tags, badges);
- ``topics``: the problems' topics, one translated vocabulary (an unknown topic is an error
  at its line);
- ``bank``: the book's problem index, with its counts and its filter in the browser
  (``static/atlas-bank.js``, the problems' data embedded in the page);
- ``answers``: in the PDF, solutions gathered in an "Answers" section at each chapter's end;
- ``taught``: the roles of labkit code and the check that a lab's taught imports are shown
  (on its page, an earlier page of its chapter, or another chapter's page, linked);
- ``runnable``: one Python file per page that runs its labs as doctests (needing only the
  book's package, not Sphinx); ``notebook``: the same labs as a Jupyter notebook;
- ``tables``: the ``computed-table`` directive (registry figures as a real table);
- ``titles``: a title several pages share names its chapter in tabs and search;
- ``state``: what a build remembers per page (the pages with errors, re-read until fixed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

STATIC = Path(__file__).resolve().parent / "static"


def _add_static(app: Sphinx, config: Config) -> None:
    if str(STATIC) not in [str(p) for p in config.html_static_path]:
        config.html_static_path.append(str(STATIC))


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.project.registry import add_page_outputs, add_settings
    from atlas.teach import bank, labcode, notebook, problems, runnable, tables, taught, titles
    from atlas.teach.answers import AnswersAtChapterEnd
    from atlas.teach.config import TeachConfig
    from atlas.teach.state import ShownCollector, TeachCollector, fail_on_wrong_quotes

    app.setup_extension("sphinx_design")
    add_settings(app, TeachConfig)
    add_page_outputs(
        app, lambda docname: [runnable.file_name(docname), notebook.file_name(docname)]
    )
    app.add_directive("labcode", labcode.LabcodeDirective)
    app.add_role("labcode", labcode.LabcodeRole())
    app.add_node(problems.problem_index_node)
    app.add_directive("problem", problems.ProblemDirective)
    app.add_directive("solution", problems.SolutionDirective)
    app.add_directive("problem-index", problems.ProblemIndexDirective)
    app.add_directive("computed-table", tables.ComputedTableDirective)
    app.add_transform(problems.ProblemHeadings)
    app.add_env_collector(problems.ProblemsCollector)
    app.add_post_transform(AnswersAtChapterEnd)
    app.connect("env-check-consistency", problems.check_labels)
    app.connect("env-get-outdated", problems.outdated_indexes)
    app.connect("doctree-resolved", bank.fill_indexes)
    app.add_css_file("atlas-teach.css")
    app.add_js_file("atlas-print.js")
    app.add_js_file("atlas-bank.js")
    app.connect("config-inited", _add_static)
    app.add_env_collector(TeachCollector)
    app.add_env_collector(ShownCollector)
    app.connect("doctree-read", taught.check_page)
    app.connect("env-updated", taught.judge)
    app.connect("env-updated", titles.qualify_shared_titles)
    app.connect("doctree-resolved", labcode.resolve_links)
    app.connect("doctree-resolved", runnable.add_lab_links, priority=400)  # before atlas.labs
    app.connect("build-finished", labcode.copy_labkit)
    app.connect("build-finished", runnable.write_files)
    app.connect("build-finished", fail_on_wrong_quotes)
    # env_version: bump when TeachState, ShownState or ProblemsState change shape.
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 4}
