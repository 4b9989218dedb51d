"""``fixture-citation``: a citation rendered as the ``upstream`` directive renders it (caption,
permalink, the link's structured attributes, upstream line numbers), from lines written in the
page, so that the PDF fixture needs no git objects. Only the reading of the code is skipped:
the nodes come from :func:`atlas.upstream.directive.citation_block`."""

from __future__ import annotations

from typing import Any, ClassVar

from atlas.code.select import Segment, language_for
from atlas.code.spec import line_ranges, parse_spec
from atlas.upstream.directive import citation_block
from atlas.upstream.registry import Upstream
from atlas.upstream.resolve import OK, Resolution
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


class FixtureCitation(SphinxDirective):
    """```` ```{fixture-citation} NAME@SHA PATH:START-END ```` with the lines as content."""

    has_content = True
    required_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {"caption": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        spec = parse_spec(self.arguments[0])
        ranges = line_ranges(spec.selector)
        assert spec.rev and ranges, "a fixture citation names its commit and its first line"
        web = f"https://example.org/{spec.name}"
        res = Resolution(
            raw=self.arguments[0],
            status=OK,
            spec=spec,
            upstream=Upstream(spec.name, f"upstreams/{spec.name}", web, spec.rev),
            commit=spec.rev,
            segments=[Segment(ranges[0][0], tuple(self.content))],
            language=language_for(spec.path),
        )
        return [citation_block(res, self, self.options.get("caption"))]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("fixture-citation", FixtureCitation)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
