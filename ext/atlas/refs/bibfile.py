"""Each ``.bib`` file can be read by pybtex, the parser sphinxcontrib-bibtex uses, before
anything reads it: a project-file check handed to atlas.project at setup. The rules an entry
must follow are :mod:`atlas.refs.checks`' errors, at their lines."""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx

from atlas.project.errors import Problem, shown
from atlas.refs.bib import ENTRY_START


def check_bib(path: Path) -> list[Problem]:
    """Whether pybtex can read ``path`` (strictly, as sphinxcontrib-bibtex does). Keys given
    twice are renamed for this check: they are a rule of atlas.refs, reported at their line."""
    from pybtex.database.input import bibtex
    from pybtex.scanner import PybtexSyntaxError

    where = shown(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [Problem(where, "not found; fix bibtex_bibfiles in conf.py, or create the file")]
    except (OSError, UnicodeDecodeError) as exc:
        return [Problem(where, f"cannot be read ({exc}); save it as UTF-8")]
    starts = list(ENTRY_START.finditer(text))
    seen: dict[str, int] = {}
    pieces, last = [], 0
    for match in starts:
        key = match["key"].lower()
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            pieces += [text[last : match.start("key")], f"{match['key']}-again{seen[key]}"]
            last = match.end("key")
    checked = "".join(pieces) + text[last:]
    import pybtex.errors

    previous = pybtex.errors.strict
    pybtex.errors.set_strict_mode(True)
    try:
        bibtex.Parser().parse_string(checked)
    except PybtexSyntaxError as exc:
        line = getattr(exc, "lineno", None)
        what = str(exc)
        what = re.sub(r"^syntax error in line \d+: ", "", what)
        opened = [m for m in starts if text.count("\n", 0, m.start()) + 1 <= (line or 0)]
        hint = ""
        if opened:
            m = opened[-1] if "premature end" in what or len(opened) < 2 else opened[-2]
            at = text.count("\n", 0, m.start()) + 1
            hint = f" (is the entry '{m['key']}' at line {at} closed with '}}'?)"
        return [Problem(where, f"syntax error: {what}{hint}; fix the entry there", line)]
    except Exception as exc:  # pybtex's other errors: say them, with no traceback
        return [Problem(where, f"pybtex cannot read it: {exc}; fix the entry it names")]
    finally:
        pybtex.errors.set_strict_mode(previous)
    return []


def check_bibfiles_readable(app: Sphinx) -> list[Problem]:
    """A project-file check (atlas.project.registry): every file of ``bibtex_bibfiles``."""
    names = getattr(app.config, "bibtex_bibfiles", [])
    return [problem for name in names for problem in check_bib(Path(app.confdir, name))]
