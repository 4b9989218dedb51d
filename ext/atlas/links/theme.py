"""Furo's own links out, filled in from the repository setting: the view and edit buttons at the
top of each page (``source_repository``, ``source_branch``, ``source_directory``) and a footer
icon to the repository (``footer_icons``).

Why the theme's options and no template of ours: furo already builds those buttons, for GitHub
and GitLab, in both editions (its words are translated through atlas.i18n's ``sphinx.po``).
A value that ``conf.py`` sets itself in ``html_theme_options`` wins; with no repository set,
nothing is added, and furo shows no button (its defaults are empty).
"""

from __future__ import annotations

from typing import Any

from atlas.project.checkout import repository

# A branch glyph of our own (two commits and a fork), drawn in the text colour like furo's icons.
ICON = (
    '<svg stroke="currentColor" fill="none" stroke-width="1.5" viewBox="0 0 16 16" '
    'height="1em" width="1em" aria-hidden="true"><circle cx="4" cy="3" r="1.6"/>'
    '<circle cx="4" cy="13" r="1.6"/><circle cx="12" cy="5" r="1.6"/>'
    '<path d="M4 4.6v6.8M12 6.6c0 3-8 2-8 4.8"/></svg>'
)
HOST_NAMES = {"github.com": "GitHub", "gitlab.com": "GitLab"}


def theme_options(app: Any, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the repository's entries added (those ``conf.py`` set are kept)."""
    repo = repository(app)
    if repo is None:
        return dict(options)
    derived: dict[str, Any] = {
        "source_repository": repo.url + "/",
        "source_branch": repo.branch,
        "source_directory": repo.source,
        "top_of_page_buttons": ["view", "edit"],
        "footer_icons": [
            {
                "name": HOST_NAMES.get(repo.host, repo.host),
                "url": repo.url,
                "html": ICON,
                "class": "atlas-repository-icon",
            }
        ],
    }
    return {**derived, **options}


def apply(app: Any, config: Any) -> None:
    """config-inited, after atlas.project checked the settings: the theme's options."""
    if config.html_theme == "furo":
        config.html_theme_options = theme_options(app, config.html_theme_options)
