"""Turn lab placeholders into what the reader sees: verified code, failures, a status line.

Runs at ``doctree-resolved`` for every builder (HTML and LaTeX alike), with plain docutils
nodes, so no builder needs a visitor of ours.
"""

from __future__ import annotations

from docutils import nodes

from atlas.labs.kinds import MODEL_BADGE, MODEL_SENTENCE
from atlas.labs.model import (
    ExampleOutcome,
    ExampleSpec,
    LabResult,
    LabSpec,
    LabStatus,
    PageResult,
    environment_of,
    result_of,
)
from atlas.ui import N_, _

# What the page, the labs table and the log call each status.
STATUS_WORDS = {
    LabStatus.PASSED: N_("passed"),
    LabStatus.FAILED: N_("FAILED"),
    LabStatus.XFAIL: N_("failed as expected"),
    LabStatus.XPASS: N_("FAILED: passed, but it is marked as an expected failure"),
    LabStatus.TIMEOUT: N_("TIMED OUT"),
    LabStatus.CRASHED: N_("CRASHED"),
    LabStatus.SKIPPED: N_("skipped"),
    LabStatus.NOT_RUN: N_("not run"),
}
UNTIMED = frozenset({LabStatus.SKIPPED, LabStatus.NOT_RUN})  # no time worth showing


def pycon(example: ExampleSpec, output: str | None) -> str:
    """An example as a Python console transcript."""
    lines = example.source.rstrip("\n").split("\n")
    text = "\n".join([">>> " + lines[0], *("... " + line for line in lines[1:])])
    if output:
        text += "\n" + output.rstrip("\n")
    return text


def status_line(result: LabResult, environment: str, show_time: bool = True) -> str:
    """``passed · 0.41 s · torch 2.13.0 · CPU``."""
    parts = [_(STATUS_WORDS[result.status])]
    if show_time and result.status not in UNTIMED:
        parts.append(f"{result.seconds:.2f}\u00a0s")
    if environment:
        parts.append(environment)
    return " · ".join(parts)


def _literal(text: str, language: str = "pycon") -> nodes.literal_block:
    block = nodes.literal_block(text, text)
    block["language"] = language
    return block


def _problem(spec: LabSpec, result: LabResult) -> list[nodes.Node]:
    """Expected against actual for each failing example, or why the lab did not finish."""
    out: list[nodes.Node] = []
    for index, example in enumerate(spec.examples):
        got = result.examples[index] if index < len(result.examples) else None
        if got is None or got.outcome == ExampleOutcome.PASSED:
            continue
        box = nodes.admonition(classes=["atlas-lab-failure", "error"])
        if got.outcome == ExampleOutcome.ERROR:
            heading = _("Example {number} (line {line}) raised")
        else:
            heading = _("Example {number} (line {line}) printed something else")
        box += nodes.title("", heading.format(number=index + 1, line=example.line))
        box += _literal(pycon(example, None))
        box += nodes.paragraph("", _("Expected:"))
        box += _literal(example.want or _("(nothing)"), "text")
        box += nodes.paragraph("", _("Got:"))
        box += _literal(got.got or _("(nothing)"), "text")
        out.append(box)
    if result.message and result.status != LabStatus.SKIPPED:
        # "not run" is a consequence or a choice, not the failure itself: a quiet note
        quiet = result.status == LabStatus.NOT_RUN
        box = nodes.admonition(
            classes=["atlas-lab-note", "note"] if quiet else ["atlas-lab-failure", "error"]
        )
        box += nodes.title("", _(STATUS_WORDS[result.status]).capitalize())
        box += _literal(result.message, "text")
        out.append(box)
    return out


def render_lab(
    spec: LabSpec,
    result: LabResult | None,
    environment: str,
    show_time: bool = True,
    links: list[nodes.Node] | None = None,
    origin: nodes.Element | None = None,
) -> nodes.container:
    """The rendered lab: title, transcript, problems, status line, then ``links`` (the page's
    runnable file and the checks the lab uses, added by atlas.teach).

    ``origin``, the placeholder's title paragraph, lends the title its source, line and uid:
    the gettext builder reads resolved doctrees and keeps only nodes the read phase versioned."""
    if result is None:
        result = LabResult(LabStatus.NOT_RUN, message="not run")
    status = result.status.replace(" ", "-")
    box = nodes.container(classes=["atlas-lab", f"atlas-lab-{status}", f"atlas-lab-{spec.kind}"])
    box += nodes.target("", "", ids=[spec.anchor])  # a target: LaTeX labels it, HTML anchors it
    title = nodes.paragraph(spec.title, classes=["atlas-lab-title"])  # the catalog's unit
    if origin is not None:
        title.rawsource, title.source, title.line = origin.rawsource, origin.source, origin.line
        if hasattr(origin, "uid"):
            title.uid = origin.uid
    title += nodes.strong("", _("Lab: "))
    title += nodes.Text(spec.title)
    if spec.kind == "model":  # a badge the reader sees in HTML and PDF alike (plain text)
        title += nodes.Text(" ")
        title += nodes.inline("", f"[{_(MODEL_BADGE)}]", classes=["atlas-lab-badge"])
    box += title
    if spec.kind == "model":
        box += nodes.paragraph(
            "", "", nodes.emphasis("", _(MODEL_SENTENCE)), classes=["atlas-lab-kind"]
        )
    show_output = not spec.hide_output
    transcript = "\n".join(
        pycon(example, example.want if show_output else None) for example in spec.examples
    )
    box += _literal(transcript)
    if result.status not in (LabStatus.PASSED, LabStatus.XFAIL):
        box.extend(_problem(spec, result))
    if result.status == LabStatus.SKIPPED and result.message:
        box += nodes.paragraph(
            "", _("Skipped: {reason}.").format(reason=result.message), classes=["atlas-lab-skip"]
        )
    line = nodes.paragraph(classes=["atlas-lab-status"])
    line += nodes.emphasis("", status_line(result, environment, show_time))
    box += line
    box.extend(links or [])
    return box


def render_page(
    doctree: nodes.document, results: dict[str, PageResult], show_time: bool = True
) -> None:
    """Replace every lab placeholder of a resolved doctree (each lab's result looked up on its
    own page: the LaTeX builder resolves one doctree that holds every page of the book)."""
    from atlas.labs.directive import lab_node

    for node in list(doctree.findall(lab_node)):
        spec: LabSpec = node["spec"]
        result = result_of(results, spec)
        environment = environment_of(results, spec.docname)
        links = node.get("atlas_links")
        origin = node.children[0] if node.children else None
        rendered = render_lab(spec, result, environment, show_time, links, origin)
        node.replace_self(rendered)
