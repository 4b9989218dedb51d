"""Problems with worked answers that the build checks: ``problem``, ``solution``, the index.

```` ::::{problem} Title ```` (options ``:label:``, a book-wide id, ``:topic:``, one of
:data:`atlas.teach.topics.TOPICS`, ``:difficulty:``, one of :data:`DIFFICULTIES`, and optionally
``:tags:``, from :data:`TAGS`) holds
the question and exactly one ``:::{solution}``, which holds the worked answer and at least one
``lab`` that runs on CPU (a ``:needs: cuda`` lab alone would leave the answer unchecked on a
CPU build); problems do not nest. Every number of an answer is computed by a lab, so a wrong
answer fails the build at its line like any lab. In HTML the solution is a collapsed
sphinx-design dropdown under its question; in the PDF :mod:`atlas.teach.answers` moves it to
the end of the chapter.

``{problem-index}`` (the back-matter page, once) lists every problem of the book by chapter,
with its counts and a filter (:mod:`atlas.teach.bank`): the book's interview-question bank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from atlas.project.envstate import PageState, StateCollector, state_of
from atlas.teach.topics import TOPICS, unknown_topic_message
from atlas.ui import N_, _

logger = logging.getLogger(__name__)
LABEL = re.compile(r"^[a-z0-9][a-z0-9-]*$")
CURRENT = "atlas_problem"  # temp_data key: the problem being parsed (for its solution)
# How hard a problem is, for a reader who has read its chapter (CONTRIBUTING "Problems"):
DIFFICULTIES = (N_("warm-up"), N_("standard"), N_("hard"))
# warm-up: one formula of the chapter applied; standard: several steps or a model to set up;
# hard: a model the reader builds, a trade-off across pages, or a result that surprises.
TAGS = (N_("interview"),)  # interview: the shape of an interview question (capacity, ledger...)
EXAMPLE = (
    "::::{problem} Title\n:label: chapter-short-name\n:topic: memory\n:difficulty: standard\n"
    ":tags: interview\n\nThe question.\n\n"
    ":::{solution}\nThe worked answer.\n\n```{lab} The answer, computed\n>>> ...\n```\n:::\n::::"
)


@dataclass(frozen=True)
class ProblemInfo:
    """What the index and the PDF need of a problem (plain data: it is pickled with the env)."""

    docname: str
    label: str
    title: str
    topic: str
    number: int
    line: int
    difficulty: str = "standard"  # one of DIFFICULTIES
    tags: tuple[str, ...] = ()  # from TAGS, in the order given

    @property
    def anchor(self) -> str:
        return f"problem-{self.label}"

    @property
    def answer_anchor(self) -> str:
        return f"answer-{self.label}"


class problem_index_node(nodes.General, nodes.Element):  # noqa: N801 - docutils naming
    """Placeholder for the list of every problem; filled at ``doctree-resolved``."""


@dataclass
class ProblemsState(PageState):
    """The book's problems as the build remembers them (see :mod:`atlas.project.envstate`)."""

    problems: dict[str, list[ProblemInfo]] = field(default_factory=dict)  # docname -> its problems
    indexes: set[str] = field(default_factory=set)  # docnames holding a problem-index


def problems_state(env: BuildEnvironment) -> ProblemsState:
    return state_of(env, ProblemsState)


class ProblemDirective(SphinxDirective):
    """A question with real numbers; its ``solution`` holds the answer and the labs."""

    required_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {
        "label": directives.unchanged,
        "topic": directives.unchanged,
        "difficulty": directives.unchanged,
        "tags": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        title = self.arguments[0].strip()
        label = (self.options.get("label") or "").strip()
        topic = (self.options.get("topic") or "").strip()
        if not label or not topic:
            missing = " and ".join(o for o, v in ((":label:", label), (":topic:", topic)) if not v)
            raise self.error(
                f'problem "{title}" has no {missing}: give :label: (a book-wide id such as '
                "parallelism-optimizer-state) and :topic: (such as memory), e.g.\n" + EXAMPLE
            )
        if topic not in TOPICS:
            raise self.error(unknown_topic_message(title, topic))
        if not LABEL.match(label):
            raise self.error(
                f'problem "{title}": :label: {label!r} must be lowercase letters, digits and '
                "hyphens (it becomes the anchor problem-LABEL)"
            )
        difficulty, tags = self._difficulty(title), self._tags(title)
        outer = self.env.temp_data.get(CURRENT)
        if outer is not None:
            first: ProblemInfo = outer["info"]
            raise self.error(
                f'problem "{title}" is inside problem "{first.title}" (line {first.line}): '
                "problems do not nest; close the outer problem (its four colons) before this one"
            )
        number = self.env.temp_data.get("atlas_problem_count", 0) + 1
        self.env.temp_data["atlas_problem_count"] = number
        info = ProblemInfo(
            self.env.docname, label, title, topic, number, self.lineno, difficulty, tags
        )
        box = nodes.admonition(classes=["atlas-problem", "hint"])
        box["atlas_problem"] = info
        heading, messages = self.state.inline_text(title, self.lineno)
        box += nodes.title(title, "", *heading)  # the catalog's unit; ProblemHeadings numbers it
        box += messages
        self.env.temp_data[CURRENT] = {"info": info, "solutions": 0}
        try:
            self.state.nested_parse(self.content, self.content_offset, box)
        finally:
            found = self.env.temp_data.pop(CURRENT, {"solutions": 0})["solutions"]
        self.set_source_info(box)
        if found != 1:
            return [
                self.reporter.error(
                    f'problem "{title}" has {found} solution parts; it needs exactly one '
                    '":::{solution}" inside it, holding the worked answer and its lab',
                    line=self.lineno,
                )
            ]
        if info.anchor in self.state.document.ids:
            # the label is this page's twice: check_labels reports it, at this problem's line
            # (a second target would add docutils' location-less "Duplicate ID")
            return [box]
        target = nodes.target("", "", ids=[info.anchor])
        self.state.document.note_explicit_target(target)
        return [target, box]

    def _difficulty(self, title: str) -> str:
        """The ``:difficulty:``, one of :data:`DIFFICULTIES` (a missing one is an error too: the
        bank filters and counts by it)."""
        difficulty = (self.options.get("difficulty") or "").strip()
        if difficulty in DIFFICULTIES:
            return difficulty
        said = f":difficulty: {difficulty!r} is not" if difficulty else "has no :difficulty:, give"
        raise self.error(
            f'problem "{title}" {said} one of {", ".join(DIFFICULTIES)} (warm-up: one formula of '
            "the chapter applied; standard: several steps; hard: a model to build or a "
            "trade-off across pages)"
        )

    def _tags(self, title: str) -> tuple[str, ...]:
        """The ``:tags:`` (comma- or space-separated), each one of :data:`TAGS`."""
        given = re.split(r"[,\s]+", self.options.get("tags") or "")
        tags = tuple(t for t in dict.fromkeys(given) if t)
        unknown = [t for t in tags if t not in TAGS]
        if unknown:
            raise self.error(
                f'problem "{title}": unknown :tags: {", ".join(unknown)}; the tags are '
                f"{', '.join(TAGS)} (add a new one to TAGS in atlas.teach.problems first)"
            )
        return tags


class SolutionDirective(SphinxDirective):
    """The worked answer: a collapsed dropdown in HTML, the chapter's Answers in the PDF."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        from sphinx_design.shared import create_component

        from atlas.labs.directive import lab_node

        current = self.env.temp_data.get(CURRENT)
        if current is None:
            raise self.error(
                'a solution stands outside a problem: put ":::{solution}" inside '
                '"::::{problem}" (use four colons for the problem, three for the solution)'
            )
        current["solutions"] += 1
        info: ProblemInfo = current["info"]
        box = create_component(
            "dropdown",
            opened=False,
            type="dropdown",
            has_title=True,
            icon=None,
            chevron=None,
            container_classes=["sd-mb-3", "atlas-solution"],
            title_classes=[],
            body_classes=[],
        )
        box["atlas_solution"] = info
        box += nodes.rubric("Solution", "Solution")
        self.state.nested_parse(self.content, self.content_offset, box)
        self.set_source_info(box)
        labs = [lab["spec"] for lab in box.findall(lab_node)]
        if not labs:
            raise self.error(
                f'the solution of problem "{info.title}" has no lab: every number of an answer '
                "is computed by a lab inside the solution, so that a wrong answer fails the "
                "build; add a ```{lab}``` block with the computation"
            )
        if all(spec.needs for spec in labs):
            needs = ", ".join(sorted({f":needs: {spec.needs}" for spec in labs}))
            raise self.error(
                f'the solution of problem "{info.title}" has only labs that need a device '
                f"({needs}): a CPU build would publish its answer unchecked; add a lab without "
                ":needs: that computes the answer on CPU (a device lab may stay beside it)"
            )
        return [box]


class ProblemIndexDirective(SphinxDirective):
    """```` ```{problem-index} ````: every problem of the book, by chapter and topic."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        first = self.env.temp_data.setdefault("atlas_problem_index_line", self.lineno)
        if first != self.lineno:
            raise self.error(
                f"a second problem-index on this page (the first is at line {first}): the index "
                "lists every problem of the book, so one is enough; delete this one"
            )
        node = problem_index_node()
        self.set_source_info(node)
        return [node]


class ProblemHeadings(SphinxTransform):
    """Number and topic around each problem's title, once the page is translated.

    The title alone is the catalog's unit: Sphinx's ``Locale`` transform (priority 20) replaces
    a unit's whole content, so a number put in the title by the directive was lost in the
    Chinese edition. This runs after it and, in a translation, makes the problem remember its
    title as the page shows it (the problem index and the PDF's answers use it)."""

    default_priority = 25

    def apply(self, **kwargs: Any) -> None:
        translated = str(self.config.language or "en") != "en"
        for box in self.document.findall(nodes.admonition):
            info = box.get("atlas_problem")
            if info is None or not box.children or not isinstance(box[0], nodes.title):
                continue
            title = box[0]
            if translated:
                box["atlas_problem"] = replace(info, title=title.astext())
            title.insert(0, nodes.Text(_("Problem {number}: ").format(number=info.number)))
            title += nodes.inline("", f" ({_(info.topic)})", classes=["atlas-problem-topic"])
            title += badges(info)


def badges(info: ProblemInfo) -> list[nodes.Node]:
    """The difficulty and the tags as small labels (a space before each, for the PDF's text)."""
    out: list[nodes.Node] = []
    for word, kind in [(info.difficulty, info.difficulty), *((t, "tag") for t in info.tags)]:
        out += [
            nodes.Text(" "),
            nodes.inline("", _(word), classes=["atlas-badge", f"atlas-badge-{kind}"]),
        ]
    return out


class ProblemsCollector(StateCollector):
    """Each page's problems, merged across parallel readers."""

    state = ProblemsState

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        state = problems_state(app.env)
        problems, indexes = state.problems, state.indexes
        found = [
            node["atlas_problem"]
            for node in doctree.findall(nodes.admonition)
            if node.get("atlas_problem")
        ]
        if found:
            problems[app.env.docname] = found
        if any(True for _ in doctree.findall(problem_index_node)):
            indexes.add(app.env.docname)


def check_labels(app: Sphinx, env: BuildEnvironment) -> None:
    """A label names one problem in the whole book (the index and the PDF link by it)."""
    problems = problems_state(env).problems
    seen: dict[str, ProblemInfo] = {}
    for docname in sorted(problems):
        for info in problems[docname]:
            first = seen.setdefault(info.label, info)
            if first is not info:
                logger.error(
                    'problem "%s": :label: %s is already used by "%s" (%s, line %d); '
                    "labels are book-wide, choose another",
                    info.title, info.label, first.title, first.docname, first.line,
                    location=(docname, info.line), type="problem", subtype="label",
                )  # fmt: skip


def outdated_indexes(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Rewrite the index page whenever any page changes (problems added, titles changed)."""
    indexes = problems_state(env).indexes
    return sorted(indexes) if added or changed or removed else []
