"""MyST's throwaway document per parse made cheap: the Chinese build parses 13,485 messages.

``myst_parser`` 5.2's renderer starts every parse with
``options.get("document", make_document())``: the default is evaluated even when Sphinx hands
it the document to fill, and ``make_document`` builds docutils' default settings afresh, an
``OptionParser`` with all of docutils' options (about 1.1 ms). Once per page that is nothing;
but Sphinx's ``Locale`` transform parses each translated message on its own
(``sphinx.transforms.i18n._publish_msgstr``), so the Chinese edition paid it 13,485 times,
about 15 s of a 140 s build, for documents thrown away unread.

:func:`install` replaces ``myst_parser.mdit_to_docutils.base.make_document`` with one that
builds the default settings once per parser class and gives each document its own deep copy
(0.07 ms): the same settings, never shared between documents. Nothing is patched when MyST no
longer has the function (a later release may have fixed the default), and MyST's own function
stays reachable as :data:`ORIGINAL`.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from docutils import nodes
from docutils.frontend import Values, get_default_settings
from docutils.parsers.rst import Parser as RSTParser
from docutils.utils import new_document

ORIGINAL: Any = None


@functools.cache
def _defaults(parser_cls: type) -> Values:
    return get_default_settings(parser_cls)


def make_document(source_path: str = "notset", parser_cls: type = RSTParser) -> nodes.document:
    """MyST's ``make_document``, with the parser's default settings built once and copied."""
    return new_document(source_path, settings=copy.deepcopy(_defaults(parser_cls)))


def install() -> bool:
    """Patch MyST's renderer module (once); whether the patch is in place."""
    global ORIGINAL
    try:
        from myst_parser.mdit_to_docutils import base
    except ImportError:
        return False
    current = getattr(base, "make_document", None)
    if current is make_document:
        return True
    if current is None:
        return False
    ORIGINAL = current
    base.make_document = make_document
    return True
