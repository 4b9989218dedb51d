"""The options of the directives that quote code (``upstream``, ``labcode``), declared once.

Both directives take their ``option_spec`` from :data:`OPTIONS`, and
:func:`atlas.code.select.check_options` (the check and the lock read options straight from the
pages) refuses any name not in it; the three lists they kept before could drift apart. Kept as
plain data, with docutils' converters looked up when a directive asks for its spec, so that
importing ``atlas.code`` loads no docutils.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

# name -> how docutils reads its value: "required" (text, must be given), "optional" (text,
# may be empty: ``:dedent:`` dedents to the common indent), "classes" (``:class:``'s list).
OPTIONS: dict[str, str] = {
    "start-after": "required",
    "end-before": "required",
    "emphasize-lines": "required",
    "dedent": "optional",
    "language": "required",
    "caption": "required",
    "contains": "required",
    "name": "optional",
    "class": "classes",
    "behind": "required",  # upstream only: why a citation stays behind its pin (review)
}


def option_spec(without: Iterable[str] = ()) -> dict[str, Callable[[Any], Any]]:
    """A directive's ``option_spec``: every option of :data:`OPTIONS` except ``without``
    (``labcode`` has no ``:language:``: it quotes Python)."""
    from docutils.parsers.rst import directives

    read = {
        "required": directives.unchanged_required,
        "optional": directives.unchanged,
        "classes": directives.class_option,
    }
    left_out = set(without)
    return {name: read[kind] for name, kind in OPTIONS.items() if name not in left_out}
