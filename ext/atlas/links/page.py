"""Under every HTML page, what furo lacks: the link to the repository, "Report a problem on this
page" (a new issue with the page's title, source path and the book's commit filled in) and the
PDFs of both editions.

The PDFs are linked where ``make pdf`` writes them, relative to the HTML: ``_build/pdf/`` beside
``_build/html/`` (the Chinese pages sit one folder deeper, in ``html/zh/``). Relative links work
from disk, and on a site that publishes ``_build`` as it is (CONTRIBUTING, "Links out"). With no
repository set, the PDF links stay and the others are left out.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from atlas.i18n.config import ENGLISH, I18nConfig, is_translation
from atlas.i18n.edition import NAMES, language_tag
from atlas.project.checkout import checkout, repository
from atlas.ui import _

PDF_FOLDER = "pdf"  # atlas.latex writes BUILD/pdf/<stem>.pdf and <stem>-<folder>.pdf


def pdf_links(app: Sphinx, pagename: str) -> list[tuple[str, str]]:
    """(language, relative URL) of each edition's PDF, English first."""
    stem = Path(app.config.latex_documents[0][1]).stem if app.config.latex_documents else "book"
    editions = I18nConfig.of(app).editions
    up = "../" * pagename.count("/") + "../"  # out of the HTML folder
    if is_translation(app.config) and str(app.config.language) in editions:
        up += "../"  # out of html/zh
    found = [(ENGLISH, f"{up}{PDF_FOLDER}/{stem}.pdf")]
    found += [(lang, f"{up}{PDF_FOLDER}/{stem}-{folder}.pdf") for lang, folder in editions.items()]
    return found


def report_link(app: Sphinx, pagename: str, title: str) -> str | None:
    """The host's new-issue form, filled in with this page; None with no repository."""
    repo = repository(app)
    if repo is None:
        return None
    path = repo.source + pagename + Path(app.env.doc2path(pagename)).suffix
    commit = checkout(app).commit
    lines = [
        _("Page: {title}").format(title=title),
        _("Source: {path}").format(path=path),
        _("Book commit: {commit}").format(commit=commit or _("unknown (built outside git)")),
        _("Edition: {language}").format(language=str(app.config.language or ENGLISH)),
        "",
        _("What is wrong, and what would be right:"),
        "",
    ]
    issue_title = _("Problem on page: {title}").format(title=title)
    return repo.new_issue(issue_title, "\n".join(lines))


def links_html(app: Sphinx, pagename: str, title: str) -> str:
    """The paragraph of links out for one page."""
    parts = []
    repo = repository(app)
    if repo is not None:
        words = escape(_("Repository"))
        parts.append(
            f'<a class="reference external atlas-repository" href="{escape(repo.url)}">{words}</a>'
        )
        report = escape(report_link(app, pagename, title) or "")
        words = escape(_("Report a problem on this page"))
        parts.append(f'<a class="reference external atlas-report" href="{report}">{words}</a>')
    pdfs = ", ".join(
        f'<a class="reference external atlas-pdf" href="{escape(url)}" '
        f'hreflang="{language_tag(lang)}">{escape(NAMES.get(lang, lang))}</a>'
        for lang, url in pdf_links(app, pagename)
    )
    words = escape(_("PDF:"))
    parts.append(f"{words} {pdfs}")
    return '<p class="atlas-links-out">' + " \u00b7 ".join(parts) + "</p>\n"


def page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: nodes.document | None
) -> None:
    """At ``html-page-context``: append the links out to the page's body."""
    if doctree is None or "body" not in context or pagename not in app.env.found_docs:
        return
    title = app.env.titles[pagename].astext() if pagename in app.env.titles else pagename
    context["body"] += links_html(app, pagename, title)
