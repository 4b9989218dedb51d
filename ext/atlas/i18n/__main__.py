"""``python -m atlas.i18n status|check``: the translation's state and checks without Sphinx.

``status`` (``make i18n-status``) prints, per page, its translated / fuzzy / untranslated
units, the pages marked complete with a ``*``. ``check`` prints the findings of
:mod:`atlas.i18n.checks` as ``file:line: WARNING: ...`` and exits 1 when there are any.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from atlas.i18n.catalogs import UnitState, open_edition
from atlas.i18n.checks import findings
from atlas.project.errors import shown


def status(locales: Path, language: str) -> int:
    edition = open_edition(locales, language)
    catalogs = edition.catalogs()
    width = max((len(c.page) for c in catalogs), default=4) + 2
    print(f"{'page':<{width}}{'translated':>11}{'fuzzy':>7}{'untranslated':>13}")
    totals = dict.fromkeys(UnitState, 0)
    for catalog in catalogs:
        counts = [catalog.count(state) for state in UnitState]
        for state, n in zip(UnitState, counts, strict=True):
            totals[state] += n
        mark = "*" if catalog.page in edition.complete else " "
        name = f"{catalog.page}{mark}"
        print(f"{name:<{width}}{counts[0]:>11}{counts[1]:>7}{counts[2]:>13}")
    t = [totals[state] for state in UnitState]
    print(f"{'all':<{width}}{t[0]:>11}{t[1]:>7}{t[2]:>13}")
    print(f"* marked complete ({shown(edition.root / 'complete.toml')})")
    return 0


def check(locales: Path, language: str) -> int:
    found = findings(open_edition(locales, language))
    for finding in found:
        place = f"{shown(finding.path)}:{finding.line}"
        print(f"{place}: WARNING: {finding.message} [i18n.{finding.subtype}]")
    return 1 if found else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m atlas.i18n", description=__doc__)
    parser.add_argument("command", choices=["status", "check"])
    parser.add_argument("--locales", type=Path, default=Path("locales"))
    parser.add_argument("--language", default="zh_CN")
    args = parser.parse_args(argv)
    try:
        run = status if args.command == "status" else check
        return run(args.locales, args.language)
    except ValueError as exc:  # an unreadable complete.toml or glossary.toml
        print(f"ERROR: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
