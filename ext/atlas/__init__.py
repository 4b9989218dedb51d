"""The LLM Infra Atlas Sphinx extensions.

One feature per subpackage, each with its own ``setup(app)`` (in the manner of sphinx-design),
set up in the order of :data:`FEATURES`; each package's docstring maps its modules. The
features build on packages that know no feature: ``project`` (settings, project files,
build state, strictness), ``code`` (quoting code, without Sphinx), ``git`` (everything asked of
git, on GitPython; the only code that starts git), ``bookroot`` (where the book is, from the app
or a command line), ``settings`` (typed settings), ``processes`` (what the lab runner and
labkit's ranks share). The feature ``i18n`` builds the Chinese edition (gettext catalogs, stale
units shown in English with a banner, the language switch, Chinese search, the glossary, the
status); ``history`` writes the dated changelog and each page's last change from the book's own
git history; ``links`` the links out of every page (repository, edit, report a problem, the
PDFs). ``labkit`` is the code labs import, never imported by Sphinx itself. No two packages
import each other, even through others (tests/test_package_imports.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the maintainer commands (python -m atlas.upstream ...) start without Sphinx
    from sphinx.application import Sphinx

__version__ = "0.1.0"

FEATURES = (
    "atlas.project",
    "atlas.assets",
    "atlas.upstream",
    "atlas.labs",
    "atlas.refs",
    "atlas.latex",
    "atlas.teach",
    "atlas.i18n",
    "atlas.history",
    "atlas.links",
)


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.project.config import check_overrides

    for feature in FEATURES:
        app.setup_extension(feature)
    check_overrides(app)  # every feature has handed over its settings; none has read them yet
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
