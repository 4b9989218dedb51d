"""Chinese search that works: jieba required, and a stemmer Sphinx 9.0 forgot.

``html_search_language = "zh"`` indexes Chinese only through jieba, and without jieba Sphinx
indexes no Chinese word at all, silently: a Chinese build without jieba stops with one error
that says how to install it. Sphinx 9.0's ``SearchChinese`` also ships the English stemmer
(``english-stemmer.js``) but names ``ChineseStemmer`` in ``language_data.js``, so the search
page stops on a JavaScript error and finds nothing; :class:`ChineseSearch` names the stemmer it
ships (its Python side, jieba and the English stemmer, is Sphinx's own).

jieba cuts a compound it does not know into its parts: 流水线并行 is indexed as 流水线 and 并行,
and the reader who types 流水线并行 finds nothing. Every rendering of the glossary is therefore
given to jieba as a word of its own (``html_search_options["dict"]``, a user dictionary written
from glossary.toml), so the index holds the whole term beside its parts.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.search import _MINIFIED_JS_PATH
from sphinx.search.zh import SearchChinese

from atlas.i18n.config import is_translation
from atlas.i18n.glossary import GLOSSARY_FILE, read_glossary
from atlas.project.errors import Problem, fail

# What each language's search needs (Sphinx's html_search_language and its tokenizer).
USER_DICT = "atlas-search-words.txt"  # jieba's user dictionary, beside the doctrees
SEARCH = {"zh": ("zh", "jieba", "jieba==0.42.1")}


class ChineseSearch(SearchChinese):
    """Sphinx's Chinese search, with the JavaScript stemmer named as the file defines it."""

    js_stemmer_rawcode = None  # type: ignore[assignment]
    js_stemmer_code = "\n".join(
        (
            (_MINIFIED_JS_PATH / "base-stemmer.js").read_text(encoding="utf-8"),
            (_MINIFIED_JS_PATH / "english-stemmer.js").read_text(encoding="utf-8"),
            "window.Stemmer = EnglishStemmer;",
        )
    )


def _search(config: Config) -> tuple[str, str, str] | None:
    if not is_translation(config):
        return None
    return SEARCH.get(str(config.language).split("_")[0])


def set_search_language(app: Sphinx, config: Config) -> None:
    """At config-inited: a Chinese build indexes its pages as Chinese, glossary terms whole."""
    found = _search(config)
    if found is None:
        return
    config.html_search_language = found[0]
    words = glossary_words(app, config)
    if words:
        path = Path(app.doctreedir) / USER_DICT
        text = "".join(f"{word}\n" for word in words)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        config.html_search_options = {**config.html_search_options, "dict": str(path)}


def glossary_words(app: Sphinx, config: Config) -> list[str]:
    """The glossary's Chinese renderings (a word jieba would cut in parts), sorted."""
    if not config.locale_dirs:
        return []
    path = Path(app.srcdir, config.locale_dirs[0]) / str(config.language) / GLOSSARY_FILE
    try:
        terms = read_glossary(path)
    except ValueError:
        return []  # reported by the catalog checks, at the file
    return sorted({r for term in terms for r in term.renderings if not r.isascii()})


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
