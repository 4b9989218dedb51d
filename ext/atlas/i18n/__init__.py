"""atlas.i18n: the Chinese edition, built from gettext catalogs (``locales/zh_CN/LC_MESSAGES``).

The English pages are the source; ``make po`` extracts their units into one catalog per page,
translators fill in the ``.po`` files, and ``-D language=zh_CN`` builds the Chinese edition.

- ``units``: what becomes a unit of a catalog (prose, titles, captions; never code or math).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

from atlas.i18n.units import SharedBlocks


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(SharedBlocks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
