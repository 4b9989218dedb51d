"""The citation's own guard, run on a suggested selector before it is offered.

A suggestion (:mod:`.suggest`) that the build would refuse is no help: this runs the
directive's own selection (:func:`atlas.code.select.select`) and option filters
(``:start-after:``, ``:end-before:``, ``:dedent:``, ``:contains:``) on the new file, and checks
``:emphasize-lines:`` carried through the suggestion's line map, exactly as the build will.
"""

from __future__ import annotations

from atlas.code.select import SelectError, apply_options, parse_emphasis, select
from atlas.code.spec import CitationSpec
from atlas.upstream.drift.suggest import Accepts, Candidate
from atlas.upstream.pagewriter import remap_emphasis


def guard_for(name: str, options: dict[str, str]) -> Accepts:
    """Whether the citation ``name PATH:SELECTOR`` with these options builds on a file."""

    def accepts(file: Candidate, selector: str | None, linemap: dict[int, int]) -> bool:
        spec = CitationSpec(name, None, file.path, selector)
        try:
            segments = apply_options(select(file.text, spec), options)
            emphasis = options.get("emphasize-lines")
            if emphasis:
                carried = remap_emphasis(emphasis, linemap) if linemap else emphasis
                if carried is None:
                    return False
                parse_emphasis(carried, segments)
        except (SelectError, LookupError, ValueError):
            return False
        return bool(segments) and all(seg.lines for seg in segments)

    return accepts
