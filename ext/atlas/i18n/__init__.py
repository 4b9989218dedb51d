"""atlas.i18n: the Chinese edition, built from gettext catalogs (``locales/zh_CN/LC_MESSAGES``).

The English pages are the source; ``make po`` extracts their units into one catalog per page,
translators fill in the ``.po`` files, and ``-D language=zh_CN`` builds the Chinese edition
(``make html`` builds both). Code, citations and labs are shared: lab results are keyed on
code, never on language, so the Chinese build runs no lab the English one ran.

- ``config``: the settings (``atlas_i18n_editions``) and which build is a translation;
- ``catalogs``: the catalogs as data (Babel): each unit's state, the pages marked complete;
- ``units``: what a unit is (prose, never code or math) and the units shown in English, marked,
  with the banner;
- ``blocks``: mermaid labels and ``\\text{}`` phrases of display math, each a unit by itself;
- ``search``: the Chinese search (jieba required, Sphinx 9.0's stemmer name fixed);
- ``edition``: ``lang="zh-CN"`` and the language switch;
- ``mystdoc``: MyST's throwaway document per parse made cheap (one parse per message);
- ``adopt``: translated nodes re-pointed at their page's document (else every message's own
  document is pickled with the page);
- ``ui_catalogs``: the interface's words (``atlas.ui``) and the theme's, in ``locale/``;
- ``glossary``: glossary.toml and the glossary check; ``pages``: the glossary and status tables;
- ``checks``: ``i18n.stale`` and ``i18n.glossary``, at catalog file and line;
- ``__main__``: ``python -m atlas.i18n status|check`` (``make i18n-status``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

from atlas.i18n import adopt, blocks, edition, mystdoc, search, ui_catalogs
from atlas.i18n.checks import check_translation
from atlas.i18n.config import I18nConfig, is_translation
from atlas.i18n.pages import (
    GlossaryTableDirective,
    TranslationStatusDirective,
    fill_status,
    translation_status_node,
)
from atlas.i18n.units import SharedBlocks, StaleUnits

STATIC = Path(__file__).resolve().parent / "static"
CSS = "atlas-i18n.css"


def _add_static(app: Sphinx, config: Config) -> None:
    if str(STATIC) not in config.html_static_path:
        config.html_static_path.append(str(STATIC))


# The PDF's own words that conf.py's latex_elements spell in English (the contents' title).
LATEX_WORDS = {"zh_CN": {r"\contentsname}{Contents}": r"\contentsname}{目录}"}}


# LaTeX's own heading words. Sphinx has no babel language for Chinese and loads ``english``, so
# the parts, chapters, figures and index said "Part I", "Chapter 1", "Figure", "Index". The
# chapter head is fncychap's (Sonny, Sphinx's default): ``\DOCH`` prints its name and number.
LATEX_PREAMBLE = {
    "zh_CN": r"""
\addto\captionsenglish{\renewcommand{\partname}{}\renewcommand{\figurename}{图}%
  \renewcommand{\tablename}{表}\renewcommand{\indexname}{索引}}
\renewcommand{\thepart}{第\,\arabic{part}\,部分}
\makeatletter
\@ifundefined{DOCH}{}{\renewcommand{\DOCH}{\raggedleft
  \CNV\FmN{第}\,\CNoV\thechapter\,\CNV\FmN{章}\par\nobreak\vskip 40\p@}}
\makeatother
"""
}


def _latex_words(app: Sphinx, config: Config) -> None:
    if not is_translation(config):
        return
    language = str(config.language)
    elements = dict(config.latex_elements)
    for english, translated in LATEX_WORDS.get(language, {}).items():
        elements = {k: v.replace(english, translated) for k, v in elements.items()}
    if language in LATEX_PREAMBLE:
        elements["preamble"] = elements.get("preamble", "") + LATEX_PREAMBLE[language]
    config.latex_elements = elements


def _add_css(app: Sphinx) -> None:
    # Only in a book with a translation: the English edition of a book without one is unchanged
    if is_translation(app.config) or I18nConfig.of(app).editions:
        app.add_css_file(CSS)


def setup(app: Sphinx) -> dict[str, Any]:
    from atlas.project.registry import add_settings

    add_settings(app, I18nConfig)
    mystdoc.install()
    app.add_search_language(search.ChineseSearch)
    app.add_transform(SharedBlocks)
    app.add_transform(StaleUnits)
    blocks.setup(app)
    app.add_node(translation_status_node)
    app.add_directive("glossary-table", GlossaryTableDirective)
    app.add_directive("translation-status", TranslationStatusDirective)
    app.connect("config-inited", _add_static)
    app.connect("config-inited", ui_catalogs.load)
    app.connect("config-inited", search.set_search_language)
    app.connect("config-inited", _latex_words)
    app.connect("builder-inited", search.require_tokenizer)
    app.connect("builder-inited", _add_css)
    app.connect("html-page-context", edition.page_context)
    app.connect("doctree-read", adopt.adopt_translated_nodes)
    app.connect("doctree-resolved", fill_status)
    app.connect("env-check-consistency", check_translation)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
