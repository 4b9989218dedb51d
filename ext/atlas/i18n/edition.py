"""What makes a translated build an edition of its own: its search, its ``lang``, the switch.

- Search: ``html_search_language = "zh"`` indexes Chinese only through jieba, and without
  jieba Sphinx indexes no Chinese word at all, silently. A Chinese build without jieba stops
  with one error that says how to install it.
- ``<html lang="zh-CN">``: furo writes ``language`` as it is (``zh_CN``, not a language tag).
- The switch: every page links to the same page in the other edition, by a relative link, so
  it works from disk too (English at ``html/``, Chinese at ``html/zh/``).
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

from atlas.i18n.config import ENGLISH, I18nConfig, is_translation
from atlas.project.errors import Problem, fail

# What each language's search needs (Sphinx's html_search_language and its tokenizer).
SEARCH = {"zh": ("zh", "jieba", "jieba==0.42.1")}
NAMES = {ENGLISH: "English", "zh_CN": "中文"}
SWITCH_LABEL = {ENGLISH: "Read this page in", "zh_CN": "本页其他语言版本："}


def language_tag(language: str) -> str:
    """``zh_CN`` as a BCP 47 tag for the ``lang`` attribute: ``zh-CN``."""
    return language.replace("_", "-")


def _search(config: Config) -> tuple[str, str, str] | None:
    if not is_translation(config):
        return None
    return SEARCH.get(str(config.language).split("_")[0])


def set_search_language(app: Sphinx, config: Config) -> None:
    """At config-inited: a Chinese build indexes its pages as Chinese."""
    found = _search(config)
    if found is not None:
        config.html_search_language = found[0]


def require_tokenizer(app: Sphinx) -> None:
    """At builder-inited: an HTML build of the Chinese edition without jieba does not start."""
    found = _search(app.config)
    if found is None or app.builder.format != "html":
        return
    _, module, pin = found
    try:
        tokenizer = importlib.import_module(module)
    except ImportError:
        message = (
            f"the {app.config.language} edition's search needs {module}, which is not installed: "
            f"without it Sphinx indexes no {app.config.language} word. Run `make setup` (or "
            f"`.venv/bin/pip install {pin}`) and build again."
        )
        fail([Problem(where="pyproject.toml", message=message)])
    if hasattr(tokenizer, "setLogLevel"):  # jieba logs its dictionary loading on stderr
        tokenizer.setLogLevel(logging.WARNING)


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
