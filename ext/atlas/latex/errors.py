"""The one error type of the PDF build: Sphinx shows it as ``PDF error: ...``, no traceback."""

from __future__ import annotations

from sphinx.errors import SphinxError


class PdfError(SphinxError):
    category = "PDF error"
