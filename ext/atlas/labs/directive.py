"""The ``lab`` directive: parse doctest examples at read time, in Sphinx, without torch.

The directive only records what to run (a :class:`LabSpec` on a placeholder node); the runner
executes at ``env-updated`` and :mod:`atlas.labs.render` turns the placeholder into the page.
"""

from __future__ import annotations

import dataclasses
import doctest
import math
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import SphinxDirective

from atlas.labs.config import LabsConfig
from atlas.labs.kinds import DEFAULT_KIND, assertion_problem, kind_option
from atlas.labs.model import ExampleSpec, LabSpec

NEEDS = ("cuda",)
_LINE_IN_MESSAGE = re.compile(r"^line (\d+) of the docstring for \S+ (.*)$", re.DOTALL)


class lab_node(nodes.General, nodes.Element):  # noqa: N801 - docutils naming
    """Placeholder for a lab; replaced at ``doctree-resolved`` by its rendering.

    Its one child is the title as a paragraph with source and line: a unit of the page's
    catalog, translated at read time by Sphinx's ``Locale`` transform, and copied back into the
    spec by :class:`LabTitleTransform`. The examples are in the spec only, never a unit.
    """


class LabTitleTransform(SphinxTransform):
    """After ``Locale`` (priority 20): the spec takes the title its page shows (translated in the
    Chinese edition), so the rendering, the "Labs" page and the runnable files agree. The result
    cache key leaves the title out: a translated lab never runs again."""

    default_priority = 25

    def apply(self, **kwargs: object) -> None:
        for node in self.document.findall(lab_node):
            title = node.children[0].astext() if node.children else ""
            if title and title != node["spec"].title:
                node["spec"] = dataclasses.replace(node["spec"], title=title)


def _positive_float(argument: str) -> float:
    try:
        value = float(argument)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ValueError(f'":timeout: {argument}" is not a positive number of seconds')
    if not math.isfinite(value):
        raise ValueError(
            f'":timeout: {argument}" is not a finite number of seconds (a lab that may run for '
            "ever would hold the build for ever); give the longest it may take, e.g. 600"
        )
    return value


def _needs(argument: str) -> str:
    value = argument.strip().lower()
    if value not in NEEDS:
        known = ", ".join(f'":needs: {need}"' for need in NEEDS)
        raise ValueError(f'":needs: {argument}" is unknown; the labs know {known}')
    return value


def parse_examples(text: str, first_line: int) -> tuple[ExampleSpec, ...]:
    """Doctest examples of ``text``, whose first line is page line ``first_line`` (1-based).

    Raises ``ValueError`` whose message starts with the page line of the problem.
    """
    try:
        parsed = doctest.DocTestParser().parse(text, "lab")
    except ValueError as exc:
        found = _LINE_IN_MESSAGE.match(str(exc))
        if not found:
            raise ValueError(f"line {first_line}: {exc}") from None
        line = first_line + int(found.group(1)) - 1
        raise ValueError(f"line {line}: {found.group(2)}") from None
    return tuple(
        ExampleSpec(source=part.source, want=part.want, line=first_line + part.lineno)
        for part in parsed
        if isinstance(part, doctest.Example)
    )


class LabDirective(SphinxDirective):
    """```` ```{lab} Title ```` with doctest examples that run when the book is built."""

    required_arguments = 1
    final_argument_whitespace = True
    has_content = True
    # Checked in run(), not here: MyST turns an option_spec failure into a warning and runs the
    # directive without the option, which would run a GPU lab on a CPU.
    option_spec = {
        "timeout": directives.unchanged_required,
        "needs": directives.unchanged_required,
        "expect-failure": directives.flag,
        "hide-output": directives.flag,
        "kind": directives.unchanged_required,
    }

    def first_content_line(self) -> int:
        """1-based page line of the first content line.

        docutils gives ``content_offset`` as the 0-based line in the document; MyST gives it
        relative to the line after the directive's opening (options and a blank line skipped).
        """
        if type(self.state).__module__.startswith("myst_parser"):
            return self.lineno + 1 + self.content_offset
        return self.content_offset + 1

    def run(self) -> list[nodes.Node]:
        title = self.arguments[0].strip()
        text = "\n".join(self.content) + "\n"
        first_line = self.first_content_line()
        try:
            timeout = _positive_float(self.options.get("timeout", str(LabsConfig.of(self).timeout)))
            needs = _needs(self.options["needs"]) if "needs" in self.options else ""
            kind = kind_option(self.options.get("kind", DEFAULT_KIND))
        except ValueError as exc:
            raise self.error(f'lab "{title}": {exc}.') from None
        try:
            examples = parse_examples(text, first_line)
        except ValueError as exc:
            line = int(str(exc).split(":")[0].removeprefix("line "))
            message = (
                f'lab "{title}": cannot parse its examples: {exc}. Write each example as '
                '">>> code" (and "... " for continuation lines) followed by its expected output.'
            )
            return [self.reporter.error(message, line=line)]
        if not examples:
            raise self.error(
                f'lab "{title}" has no ">>>" examples: a lab is doctest examples with their '
                'expected output, e.g. ">>> 1 + 1" then "2" on the next line.'
            )
        labs = self.env.temp_data.setdefault("atlas_labs_count", 0)
        self.env.temp_data["atlas_labs_count"] = labs + 1
        anchor = nodes.make_id(f"lab-{title}") or f"lab-{labs + 1}"
        if anchor in self.state.document.ids:
            anchor = f"{anchor}-{labs + 1}"
        spec = LabSpec(
            docname=self.env.docname,
            index=labs,
            anchor=anchor,
            title=title,
            text=text,
            line=first_line,
            start_line=self.lineno,
            examples=examples,
            timeout=timeout,
            needs=needs,
            expect_failure="expect-failure" in self.options,
            hide_output="hide-output" in self.options,
            kind=kind,
        )
        source, _ = self.state_machine.get_source_and_line(self.lineno)
        page = Path(self.env.doc2path(self.env.docname)).resolve()
        if source and Path(source).resolve() != page:  # an included file: its lines, its name
            spec = dataclasses.replace(spec, source=str(source))
        node = lab_node(spec=spec)  # the anchor goes on a target inside the rendering
        self.set_source_info(node)
        heading = nodes.paragraph(title, title)
        self.set_source_info(heading)
        node += heading
        self.state.document.ids[anchor] = node
        must_assert = LabsConfig.of(self).checks_must_assert
        problem = assertion_problem(kind, examples) if must_assert else None
        if problem:  # the lab still runs and renders; the build reports it at the lab's line
            return [node, self.reporter.error(f'lab "{title}": {problem}.', line=self.lineno)]
        return [node]
