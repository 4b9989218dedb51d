"""The book's reading order, from its toctrees: what the problem index, the labs table and the
teaching check list pages by, so that each lists them as the reader meets them."""

from __future__ import annotations

from sphinx.environment import BuildEnvironment


def book_order(env: BuildEnvironment, root: str) -> tuple[list[str], dict[str, str]]:
    """Pages in reading order and, for each, its chapter (the page the root's toctree lists).

    The root itself is not in the order (it is every chapter's parent); a page no toctree
    reaches is in neither: callers put it after the rest."""
    order: list[str] = []
    chapter_of: dict[str, str] = {}
    includes = env.toctree_includes

    def walk(docname: str, chapter: str) -> None:
        if docname in chapter_of:
            return
        chapter_of[docname] = chapter
        order.append(docname)
        for child in includes.get(docname, []):
            walk(child, chapter)

    chapter_of[root] = root
    for child in includes.get(root, []):
        walk(child, child)
    return order, chapter_of
