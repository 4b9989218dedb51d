"""Titles that say where a page is: a page whose title other pages share ("Problems" closes
every chapter) gets its chapter's name in its long title, "Problems: HPC foundations".

Sphinx's HTML uses the long title for the browser tab and the search results, not for the
sidebar and the toctrees, which already show the chapter around the page. Sixteen tabs and
sixteen search results called "Problems" then say which chapter each is.
"""

from __future__ import annotations

from collections import Counter

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from atlas.project.order import book_order
from atlas.ui import _


def qualify_shared_titles(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """At ``env-updated``: the long title of each page with a shared title names its chapter;
    returns the pages whose long title changed, so that they are written again. A long title
    the page chose itself (``title`` metadata) is kept."""
    _order, chapter_of = book_order(env, app.config.root_doc)
    texts = {docname: title.astext() for docname, title in env.titles.items()}
    shared = Counter(texts.values())
    changed = []
    for docname, text in sorted(texts.items()):
        chapter = chapter_of.get(docname)
        if shared[text] < 2 or chapter in (None, docname) or chapter not in texts:
            continue
        qualified = _("{title}: {chapter}").format(title=text, chapter=texts[chapter])
        current = env.longtitles.get(docname)
        if current is not None and current.astext() not in (text, qualified):
            continue  # the page's own long title
        if current is None or current.astext() != qualified:
            env.longtitles[docname] = nodes.title(qualified, qualified)
            changed.append(docname)
    return changed
