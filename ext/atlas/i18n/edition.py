"""What tells the reader which edition a page is of: its ``lang``, and the switch.

- ``<html lang="zh-CN">``: furo writes ``language`` as it is (``zh_CN``, not a language tag).
- The switch: every page links to the same page in the other edition, by a relative link, so
  it works from disk too (English at ``html/``, Chinese at ``html/zh/``).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

from atlas.i18n.config import ENGLISH, I18nConfig, is_translation

NAMES = {ENGLISH: "English", "zh_CN": "中文"}
SWITCH_LABEL = {ENGLISH: "Read this page in", "zh_CN": "本页其他语言版本："}


def language_tag(language: str) -> str:
    """``zh_CN`` as a BCP 47 tag for the ``lang`` attribute: ``zh-CN``."""
    return language.replace("_", "-")


def other_edition(app: Sphinx, pagename: str) -> tuple[str, str] | None:
    """(language, relative URL) of the same page in the other edition, or None."""
    editions = I18nConfig.of(app).editions
    if not editions:
        return None
    target = app.builder.get_target_uri(pagename)
    up = "../" * pagename.count("/")
    language = str(app.config.language or ENGLISH)
    if language == ENGLISH:
        other, folder = next(iter(editions.items()))
        return other, f"{up}{folder}/{target}"
    if language not in editions:
        return None
    return ENGLISH, up + "../" + target


def switch_html(app: Sphinx, pagename: str) -> str:
    found = other_edition(app, pagename)
    if found is None:
        return ""
    other, url = found
    here = str(app.config.language or ENGLISH)
    label = SWITCH_LABEL.get(here, SWITCH_LABEL[ENGLISH])
    return (
        f'<p class="atlas-language-switch">{label} '
        f'<a href="{url}" hreflang="{language_tag(other)}" lang="{language_tag(other)}">'
        f"{NAMES.get(other, other)}</a></p>\n"
    )


def page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """At html-page-context: the ``lang`` tag and, above the page's body, the switch."""
    if is_translation(app.config):
        context["language"] = language_tag(str(app.config.language))
    if doctree is None or "body" not in context:
        return  # search page, index: no body of ours
    context["body"] = switch_html(app, pagename) + context["body"]
